#!/usr/bin/env bash
# CLI tests of `twag subscriber add|del|show|list|import` (the subscriber
# store, include/twag/store.h): values shown are those added; keys appear
# only with --keys and never in plain in the database files; OPc derived
# from --op is checked against AES from Python's "cryptography" package
# (TS 35.206 §4.1: OPc = OP ^ E_K(OP)); CSV import is all or nothing; bad
# input exits 2 with one line naming the option; KEK rules (0600 file,
# TWAG_KEK, another KEK refused).
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
TWAG=${TWAG:-$root/build/twag}
case $TWAG in /*) ;; *) TWAG=$root/$TWAG ;; esac
tmp=$(mktemp -d /tmp/twag-test-sub-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 2
unset TWAG_KEK

pass=0
fail=0
check() { # $1 = description; the rest is a command that must succeed
	local what=$1
	shift
	if "$@" >/dev/null; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL test_subscriber: $what"
	fi
}

# value of name=... in a name=value block
val() { printf '%s\n' "$1" | sed -n "s/^$2=//p"; }

rhex() { python3 -c "import os,sys; print(os.urandom(int(sys.argv[1])).hex())" "$1"; }

# bad usage: exit 2 and exactly one line on stderr naming the option
bad() { # $1 = option expected in the message (or -), rest = arguments
	local opt=$1 out err rc
	shift
	out=$("$TWAG" subscriber "$@" 2>"$tmp/err")
	rc=$?
	err=$(cat "$tmp/err")
	if [ "$rc" -eq 2 ] && [ "$(printf '%s\n' "$err" | grep -c .)" -eq 1 ] &&
		{ [ "$opt" = - ] || printf '%s' "$err" | grep -q -- "--$opt"; } && [ -z "$out" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1))
		echo "FAIL test_subscriber: bad usage ($*) -> rc $rc, stderr '$err', expected --$opt"
	fi
}

# the plain octets of a hex string occur in no file of the database
not_on_disk() { # $1 = hex
	python3 - "$1" "$tmp/s.db" <<'EOF'
import sys, os
needle = bytes.fromhex(sys.argv[1])
for suffix in ("", "-wal"):
    p = sys.argv[2] + suffix
    if os.path.exists(p) and needle in open(p, "rb").read():
        sys.exit(1)
EOF
}

opc_of() { # K OP -> OPc with AES-128 from python3-cryptography
	python3 - "$1" "$2" <<'EOF'
import sys
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
k, op = bytes.fromhex(sys.argv[1]), bytes.fromhex(sys.argv[2])
e = Cipher(algorithms.AES(k), modes.ECB()).encryptor()
c = e.update(op) + e.finalize()
print(bytes(a ^ b for a, b in zip(c, op)).hex())
EOF
}

db=s.db
imsi1=001010000000001
imsi2=001010000000002
imsi3=00101000000003
k1=$(rhex 16)
opc1=$(rhex 16)
k2=$(rhex 16)
op2=$(rhex 16)

# ---- add / show ------------------------------------------------------------
check "add milenage --opc" "$TWAG" subscriber add --db $db --imsi $imsi1 --algo milenage \
	--ki "$k1" --opc "$opc1" --amf 8000 --sqn 000000000041
check "KEK file created 0600 beside the db" test "$(stat -c %a $db.kek)" = 600
out=$("$TWAG" subscriber show --db $db --imsi $imsi1)
check "show exits 0" test $? -eq 0
check "show imsi" test "$(val "$out" imsi)" = $imsi1
check "show algo" test "$(val "$out" algo)" = milenage
check "show amf" test "$(val "$out" amf)" = 8000
# --sqn 0x41 = SEQ 2 || IND 1: SEQ_HE 2, shown as SEQ_HE || IND 0
check "show seq_he" test "$(val "$out" seq_he)" = 2
check "show sqn" test "$(val "$out" sqn)" = 000000000040
check "show sqn_reserved" test "$(val "$out" sqn_reserved)" = 2
check "show: no keys without --keys" test -z "$(printf '%s\n' "$out" | grep -E '^(ki|opc|topc)=')"
check "show: key material absent" test -z "$(printf '%s\n' "$out" | grep -i -e "$k1" -e "$opc1")"
out=$("$TWAG" subscriber show --db $db --imsi $imsi1 --keys)
check "show --keys ki" test "$(val "$out" ki)" = "$k1"
check "show --keys opc" test "$(val "$out" opc)" = "$opc1"
check "ki not in plain on disk" not_on_disk "$k1"
check "opc not in plain on disk" not_on_disk "$opc1"

# --op: OPc derived as TS 35.206 says, cross-checked with Python's AES
check "add milenage --op (uppercase hex)" "$TWAG" subscriber add --db $db --imsi $imsi2 \
	--algo milenage --ki "${k2^^}" --op "$op2" --amf 0000 --sqn 000000000000
out=$("$TWAG" subscriber show --db $db --imsi $imsi2 --keys)
check "opc from op (python cryptography)" test "$(val "$out" opc)" = "$(opc_of "$k2" "$op2")"
check "ki stored lowercase" test "$(val "$out" ki)" = "$k2"
check "sqn 0" test "$(val "$out" sqn)" = 000000000000

# exists: exit 1 without --replace, replaced with it
"$TWAG" subscriber add --db $db --imsi $imsi1 --algo milenage --ki "$k2" --opc "$opc1" \
	--amf 8000 --sqn 000000000000 2>/dev/null
check "add existing -> exit 1" test $? -eq 1
check "add --replace" "$TWAG" subscriber add --db $db --imsi $imsi1 --algo milenage \
	--ki "$k2" --opc "$opc1" --amf 9001 --sqn 000000001000 --replace
out=$("$TWAG" subscriber show --db $db --imsi $imsi1 --keys)
check "replaced ki" test "$(val "$out" ki)" = "$k2"
check "replaced amf" test "$(val "$out" amf)" = 9001
check "replaced seq_he" test "$(val "$out" seq_he)" = $((0x1000 >> 5))

# TUAK: 256-bit K, TOPc, sizes; --top gives the same TOPc as `twag tuak`
kt=$(rhex 32)
topc=$(rhex 32)
top=$(rhex 32)
check "add tuak --topc" "$TWAG" subscriber add --db $db --imsi $imsi3 --algo tuak --ki "$kt" \
	--topc "$topc" --amf 8000 --sqn 0000000000a0 --res-bits 128 --iterations 2
out=$("$TWAG" subscriber show --db $db --imsi $imsi3 --keys)
check "tuak algo" test "$(val "$out" algo)" = tuak
check "tuak ki" test "$(val "$out" ki)" = "$kt"
check "tuak topc" test "$(val "$out" topc)" = "$topc"
check "tuak res_bits" test "$(val "$out" res_bits)" = 128
check "tuak iterations" test "$(val "$out" iterations)" = 2
check "tuak mac_bits" test "$(val "$out" mac_bits)" = 64
check "tuak seq_he" test "$(val "$out" seq_he)" = 5
check "tuak K not on disk" not_on_disk "$kt"
check "tuak TOPc not on disk" not_on_disk "$topc"
check "add tuak --top" "$TWAG" subscriber add --db $db --imsi 001010000000004 --algo tuak \
	--ki "${kt:0:32}" --top "$top" --amf 8000 --sqn 000000000000
want=$("$TWAG" tuak --k "${kt:0:32}" --top "$top" --rand 00000000000000000000000000000000 \
	--sqn 000000000000 --amf 0000 | sed -n 's/^topc=//p')
out=$("$TWAG" subscriber show --db $db --imsi 001010000000004 --keys)
check "tuak --top: same TOPc as twag tuak" test "$(val "$out" topc)" = "$want"

# COMP128 v1..v3: Ki only, no AKA fields shown
for v in 1 2 3; do
	kc=$(rhex 16)
	check "add comp128v$v" "$TWAG" subscriber add --db $db --imsi 00101000000010$v \
		--algo comp128v$v --ki "$kc"
	out=$("$TWAG" subscriber show --db $db --imsi 00101000000010$v)
	check "comp128v$v algo" test "$(val "$out" algo)" = comp128v$v
	check "comp128v$v no ki without --keys" test -z "$(val "$out" ki)"
	out=$("$TWAG" subscriber show --db $db --imsi 00101000000010$v --keys)
	check "comp128v$v ki" test "$(val "$out" ki)" = "$kc"
	check "comp128v$v ki not on disk" not_on_disk "$kc"
done

# ---- list / del ------------------------------------------------------------
out=$("$TWAG" subscriber list --db $db)
check "list exits 0" test $? -eq 0
check "list: 7 lines" test "$(printf '%s\n' "$out" | grep -c .)" -eq 7
check "list: IMSI order" test "$(printf '%s\n' "$out" | cut -d' ' -f1)" = \
	"$(printf '%s\n' "$out" | cut -d' ' -f1 | sort)"
check "list: line format" test "$(printf '%s\n' "$out" | grep "^$imsi1 ")" = \
	"$imsi1 milenage 9001 000000001000"
check "list: no keys" test -z "$(printf '%s\n' "$out" | grep -i -e "$k1" -e "$k2" -e "$kt")"
check "del" "$TWAG" subscriber del --db $db --imsi $imsi2
"$TWAG" subscriber show --db $db --imsi $imsi2 2>/dev/null
check "show deleted -> exit 1" test $? -eq 1
"$TWAG" subscriber del --db $db --imsi $imsi2 2>/dev/null
check "del again -> exit 1" test $? -eq 1

# ---- import ----------------------------------------------------------------
ki_a=$(rhex 16)
opc_a=$(rhex 16)
ki_b=$(rhex 32)
topc_b=$(rhex 32)
ki_c=$(rhex 16)
op_d=$(rhex 16)
cat >in.csv <<EOF
imsi,algo,ki,opc,op,amf,sqn
# a comment, then a blank line

001019990000001,milenage,$ki_a,$opc_a,,8000,000000000020
001019990000002,tuak,$ki_b,$topc_b,,8000,000000000040
001019990000003,comp128v2,$ki_c,,,,
001019990000004,milenage,$ki_a,,$op_d,0001,000000000000
EOF
out=$("$TWAG" subscriber import --db $db --csv in.csv)
check "import exits 0" test $? -eq 0
check "import count" test "$(val "$out" imported)" = 4
out=$("$TWAG" subscriber show --db $db --imsi 001019990000001 --keys)
check "import milenage opc" test "$(val "$out" opc)" = "$opc_a"
check "import milenage seq_he" test "$(val "$out" seq_he)" = 1
out=$("$TWAG" subscriber show --db $db --imsi 001019990000002 --keys)
check "import tuak topc from the opc column" test "$(val "$out" topc)" = "$topc_b"
check "import tuak ki" test "$(val "$out" ki)" = "$ki_b"
out=$("$TWAG" subscriber show --db $db --imsi 001019990000003 --keys)
check "import comp128" test "$(val "$out" algo),$(val "$out" ki)" = "comp128v2,$ki_c"
out=$("$TWAG" subscriber show --db $db --imsi 001019990000004 --keys)
check "import op -> opc (python cryptography)" test "$(val "$out" opc)" = \
	"$(opc_of "$ki_a" "$op_d")"
check "import amf" test "$(val "$out" amf)" = 0001
# again: every IMSI exists -> exit 1, nothing changes; --replace works
n_before=$("$TWAG" subscriber list --db $db | wc -l)
printf 'imsi,algo,ki\n001019990000009,comp128v1,%s\n001019990000003,comp128v1,%s\n' \
	"$(rhex 16)" "$(rhex 16)" >dup.csv
"$TWAG" subscriber import --db $db --csv dup.csv 2>"$tmp/err" >/dev/null
check "import with an existing IMSI -> exit 1" test $? -eq 1
check "import names the line" grep -q "line 3" "$tmp/err"
check "import all or nothing" test "$("$TWAG" subscriber list --db $db | wc -l)" -eq "$n_before"
check "import --replace" "$TWAG" subscriber import --db $db --csv dup.csv --replace
out=$("$TWAG" subscriber show --db $db --imsi 001019990000003)
check "import --replaced algo" test "$(val "$out" algo)" = comp128v1

# ---- bad usage: exit 2, one line naming the option --------------------------
A=(--db $db --imsi 001010000000077 --algo milenage --ki "$k1" --opc "$opc1" --amf 8000 --sqn 000000000000)
bad ki add --db $db --imsi 001010000000077 --algo milenage --opc "$opc1" --amf 8000 --sqn 000000000000
bad ki add --db $db --imsi 001010000000077 --algo milenage --ki 00 --opc "$opc1" --amf 8000 --sqn 000000000000
bad amf add --db $db --imsi 001010000000077 --algo milenage --ki "$k1" --opc "$opc1" --amf 800 --sqn 000000000000
bad amf add --db $db --imsi 001010000000077 --algo milenage --ki "$k1" --opc "$opc1" --sqn 000000000000
bad sqn add --db $db --imsi 001010000000077 --algo milenage --ki "$k1" --opc "$opc1" --amf 8000 --sqn 0000000000000
bad sqn add --db $db --imsi 001010000000077 --algo milenage --ki "$k1" --opc "$opc1" --amf 8000 --sqn 00000000000g
bad opc add --db $db --imsi 001010000000077 --algo milenage --ki "$k1" --amf 8000 --sqn 000000000000
bad op add "${A[@]}" --op "$op2"
bad algo add --db $db --imsi 001010000000077 --algo foo --ki "$k1"
bad algo add --db $db --imsi 001010000000077 --ki "$k1"
bad imsi add --db $db --imsi 0010 --algo comp128v1 --ki "$k1"
bad imsi add --db $db --imsi 0010100000000777 --algo comp128v1 --ki "$k1"
bad imsi add --db $db --algo comp128v1 --ki "$k1"
bad db add --imsi 001010000000077 --algo comp128v1 --ki "$k1"
bad opc add --db $db --imsi 001010000000077 --algo comp128v1 --ki "$k1" --opc "$opc1"
bad topc add --db $db --imsi 001010000000077 --algo milenage --ki "$k1" --topc "$topc" --opc "$opc1" --amf 8000 --sqn 000000000000
bad mac-bits add --db $db --imsi 001010000000077 --algo tuak --ki "$kt" --topc "$topc" --amf 8000 --sqn 000000000000 --mac-bits 128
bad res-bits add --db $db --imsi 001010000000077 --algo tuak --ki "$kt" --topc "$topc" --amf 8000 --sqn 000000000000 --res-bits 256
bad iterations add --db $db --imsi 001010000000077 --algo tuak --ki "$kt" --topc "$topc" --amf 8000 --sqn 000000000000 --iterations 0
bad ki add --db $db --imsi 001010000000077 --algo tuak --ki "${kt:0:48}" --topc "$topc" --amf 8000 --sqn 000000000000
bad - add "${A[@]}" --bogus 1
bad - add "${A[@]}" extra
bad keys show --db $db --imsi $imsi1 --keys=1
bad imsi show --db $db
bad imsi del --db $db --imsi 12a45
bad - frobnicate --db $db
bad csv import --db $db
bad csv import --db $db --csv "$tmp/none.csv"
printf 'imsi,algo,ki,color\n' >badcol.csv
bad csv import --db $db --csv badcol.csv
printf 'imsi,algo,ki,opc,op,amf,sqn\n001010000000088,milenage,%s,zz,,8000,000000000000\n' "$k1" >badhex.csv
bad csv import --db $db --csv badhex.csv
check "bad CSV names line and column" grep -q "line 2: opc" "$tmp/err"
printf 'imsi,algo,ki\n001010000000088,comp128v1\n' >short.csv
bad csv import --db $db --csv short.csv
check "nothing was added by the bad adds" test "$("$TWAG" subscriber list --db $db | grep -c 0010100000000[78][78])" -eq 0
"$TWAG" subscriber show --db $db --imsi 001010000000077 >/dev/null 2>&1
check "bad add left no row" test $? -eq 1

# ---- KEK rules -------------------------------------------------------------
cp $db.kek kek.copy
chmod 644 kek.copy
"$TWAG" subscriber list --db $db --kek-file kek.copy >/dev/null 2>"$tmp/err"
check "KEK file 0644 -> exit 1" test $? -eq 1
check "KEK mode named" grep -q "group/others" "$tmp/err"
chmod 600 kek.copy
check "KEK file 0600 accepted" "$TWAG" subscriber list --db $db --kek-file kek.copy
rhex 32 >other.kek
chmod 600 other.kek
"$TWAG" subscriber list --db $db --kek-file other.kek >/dev/null 2>"$tmp/err"
check "another KEK -> exit 1" test $? -eq 1
check "another KEK named" grep -q "another KEK" "$tmp/err"
TWAG_KEK=$(rhex 32) "$TWAG" subscriber list --db $db >/dev/null 2>&1
check "TWAG_KEK (wrong) used over the file" test $? -eq 1
kenv=$(rhex 32)
check "TWAG_KEK creates a db" env TWAG_KEK="$kenv" "$TWAG" subscriber add --db env.db \
	--imsi $imsi1 --algo comp128v1 --ki "$k1"
check "TWAG_KEK: no .kek file written" test ! -e env.db.kek
check "TWAG_KEK: readable with it" env TWAG_KEK="$kenv" "$TWAG" subscriber show --db env.db --imsi $imsi1
"$TWAG" subscriber show --db env.db --imsi $imsi1 >/dev/null 2>&1
check "no KEK -> exit 1" test $? -eq 1
"$TWAG" subscriber list --db missing.db >/dev/null 2>&1
check "missing db -> exit 1" test $? -eq 1
check "show/list create no db" test ! -e missing.db

echo "test_subscriber: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
