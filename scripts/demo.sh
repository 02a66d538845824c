#!/usr/bin/env bash
# The main job until the gateway exists: the CLI's help and a worked
# example — TS 35.208 §4.3 Test Set 1 through `twag milenage`, beside the
# values the specification publishes for it.
set -eu
build=${1:-build}
"$build/twag" --help
echo
echo "== Worked example: Milenage, 3GPP TS 35.208 test set 1 =="
echo "\$ twag milenage --k 465b5ce8b199b49faa5f0a2ee238a6bc --op cdc202d5123e20f62b6d676ac72cb318 \\"
echo "       --rand 23553cbe9637a89d218ae64dae47bf35 --sqn ff9bb4d0b607 --amf b9b9"
"$build/twag" milenage --k 465b5ce8b199b49faa5f0a2ee238a6bc \
	--op cdc202d5123e20f62b6d676ac72cb318 --rand 23553cbe9637a89d218ae64dae47bf35 \
	--sqn ff9bb4d0b607 --amf b9b9
echo "(TS 35.208 publishes: opc=cd63cb71954a9f4e48a5994e37a02baf mac_a=4a9ffac354dfafb3"
echo " mac_s=01cfaf9ec4e871e9 res=a54211d5e3ba50bf ck=b40ba9a3c58b2a05bbf0d987b21bf8cb"
echo " ik=f769bcd751044604127672711c6d3441 ak=aa689c648370 ak_star=451e8beca43b)"
echo
echo "CPU paths in use:"
"$build/twag" cpu
