#!/usr/bin/env bash
# `make run`, the README's main job: twagd on 127.0.0.1:1812 (RADIUS
# secret testing123, metrics on 127.0.0.1:9812) in the foreground, over a
# fresh demo store of documented test subscribers (docs/twagd.md), after
# printing how to attach a client. Ctrl-C stops it (SIGINT: clean exit).
#
# usage: scripts/run-gateway.sh [BUILD_DIR]   (twag and twagd already built)
set -eu
build=${1:-build}
twag=$build/twag
twagd=$build/twagd
demo=$build/demo
db=$demo/twag.db
realm=wlan.mnc001.mcc001.3gppnetwork.org
secret=testing123

for b in "$twag" "$twagd"; do
	[ -x "$b" ] || { echo "run-gateway: $b is not built (make $b)" >&2; exit 1; }
done

# A fresh store every time: the demo USIMs below start from SQN 0.
rm -rf "$demo"
mkdir -p "$demo"
chmod 700 "$demo"

# 3GPP TS 35.208 §4.3 Test Set 1 K and OP (published test values, never a
# real card's), AMF 8000 (separation bit set, TS 33.402 §6.2: EAP-AKA'
# needs it), SQN 0: ten USIMs 001010000000001 .. 001010000000010.
k=465b5ce8b199b49faa5f0a2ee238a6bc
op=cdc202d5123e20f62b6d676ac72cb318
for i in 01 02 03 04 05 06 07 08 09 10; do
	"$twag" subscriber add --db "$db" --imsi "0010100000000$i" --algo milenage \
		--ki "$k" --op "$op" --amf 8000 --sqn 000000000000 >/dev/null
done
# Two COMP128v1 SIMs for EAP-SIM, with the Ki of the COMP128 community
# vector set (tests/vectors/comp128v1.vec): 001010000000101, ..102.
ki=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
for i in 101 102; do
	"$twag" subscriber add --db "$db" --imsi "001010000000$i" --algo comp128v1 \
		--ki "$ki" >/dev/null
done

# How to attach: an eapol_test configuration (Debian eapoltest has no SIM
# simulator: external_sim=1, and something must answer its SIM requests)
# and a radeapclient input (it computes COMP128v1 itself).
cat >"$demo/eapol-aka-prime.conf" <<CONF
# eapol_test -W -c $demo/eapol-aka-prime.conf -a 127.0.0.1 -p 1812 -s $secret -t 10
# external_sim=1: answer CTRL-REQ-SIM-<id>:UMTS-AUTH:<RAND>:<AUTN> on the
# control socket with CTRL-RSP-SIM-<id>:UMTS-AUTH:<IK>:<CK>:<RES>
# (osmo-auc-gen -3 -a milenage -k $k -o $op -f 8000 -r <RAND> ...).
ctrl_interface=$demo/eapol-ctrl
external_sim=1
network={
	key_mgmt=IEEE8021X
	eap=AKA'
	identity="6001010000000001@$realm"
}
CONF
cat >"$demo/radeapclient-sim.txt" <<CONF
User-Name = "1001010000000101@$realm", EAP-Code = Response, EAP-Id = 1, EAP-Type-Identity = "1001010000000101@$realm", EAP-Sim-Ki = 0x$ki, Message-Authenticator = 0x00
CONF

cat <<TXT
== twagd demo: RADIUS on 127.0.0.1:1812, secret $secret; metrics http://127.0.0.1:9812/metrics ==
Store $db (KEK $db.kek), subscribers (docs/twagd.md):
  001010000000001 .. 001010000000010  Milenage, TS 35.208 test set 1 K/OP, AMF 8000, SQN 0
  001010000000101, 001010000000102    COMP128v1, Ki $ki
Identities: 6<IMSI>@$realm EAP-AKA', 0<IMSI>@... EAP-AKA, 1<IMSI>@... EAP-SIM.

Attach with radeapclient (EAP-SIM, computes COMP128v1 from the Ki):
  radeapclient -x -f $demo/radeapclient-sim.txt 127.0.0.1:1812 auth $secret
Attach with eapol_test (EAP-AKA', needs a SIM-request answerer on its control
socket; tests/integration/test_eapol.sh does it all with osmo-auc-gen-style
Milenage in Python):
  eapol_test -W -c $demo/eapol-aka-prime.conf -a 127.0.0.1 -p 1812 -s $secret -t 10
Many phones at once (the load generator, its CSV provisions the store too):
  $build/twag-load --gen 1000 --gen-csv /tmp/subs.csv && $twag subscriber import --db $db --csv /tmp/subs.csv
  $build/twag-load --server 127.0.0.1:1812 --secret $secret --method aka-prime --subscribers /tmp/subs.csv --time 10
Ctrl-C stops the gateway.
TXT

exec "$twagd" --listen 127.0.0.1:1812 --store "sqlite:$db" --client "127.0.0.1=$secret" \
	--network-name WLAN --realm "$realm" --metrics 127.0.0.1:9812 --threads 2 \
	--sim-fullauth-id-req
