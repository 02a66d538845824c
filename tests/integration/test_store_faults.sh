#!/usr/bin/env bash
# tests/integration/test_store_faults.sh — twagd started on a store it
# cannot use must refuse to start, with one start-failed line that names
# the cause, and lose nothing already stored:
#   KEK file missing (given, and beside an existing database: no new KEK
#   may be made then), open to group/others, not 64 hex digits, another
#   database's KEK; the database on a read-only file system; its lock held
#   by another process; its file system full.
# After each: the subscribers and their keys are as before (`twag
# subscriber show --keys`), `twag store check` is clean, and no stray KEK
# file was written. Then twagd with everything right starts.
# Loopback only; temp dir and processes removed on exit; ends
# "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/lib.sh
lib_begin store-faults twag-store-faults 20
mounted=
cleanup_more() { [ -n "$mounted" ] && umount "$mounted" 2>/dev/null; }

db=$tmp/store.db
K=465b5ce8b199b49faa5f0a2ee238a6bc
OPC=cd63cb71954a9f4e48a5994e37a02baf
for i in 1 2 3; do
	"$TWAG" subscriber add --db "$db" --imsi "00101000000000$i" --algo milenage --ki "$K" \
		--opc "$OPC" --amf 8000 --sqn 000000000000 >/dev/null 2>"$tmp/add.err" ||
		{ no "provisioning" "$tmp/add.err"; finish; }
done
snapshot() { # the keys and SQN state of every subscriber, with the right KEK
	local i
	for i in 1 2 3; do
		"$TWAG" subscriber show --db "$db" --imsi "00101000000000$i" --keys --kek-file "$tmp/good.kek"
	done
}
cp "$db.kek" "$tmp/good.kek"
snapshot >"$tmp/before" 2>&1

# refuse START-ARGS... PATTERN LABEL: twagd exits non-zero by itself within
# 10 s, with one start-failed line matching PATTERN; nothing lost
refuse() {
	local label=$1 pattern=$2 log=$tmp/twagd.$pass.$fail.log rc
	shift 2
	timeout 10 "$@" --listen 127.0.0.1:0 --client 127.0.0.1=s >"$log" 2>&1
	rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 124 ] && [ "$(grep -c 'event=start-failed' "$log")" -eq 1 ] &&
		grep 'event=start-failed' "$log" | grep -qE "$pattern"; then
		ok "$label: refused, the message names the cause"
	else
		no "$label: exit $rc, expected a start-failed line matching /$pattern/" "$log"
	fi
	if snapshot >"$tmp/after" 2>&1 && cmp -s "$tmp/before" "$tmp/after"; then
		ok "$label: every subscriber and key as before"
	else
		no "$label: the store changed" "$tmp/after"
	fi
	if "$TWAG" store check --db "$db" --kek-file "$tmp/good.kek" >"$tmp/check" 2>&1; then
		ok "$label: store check clean"
	else
		no "$label: store check" "$tmp/check"
	fi
}

refuse "KEK file given but missing" "KEK file .*nope.kek.*No such file" \
	"$TWAGD" --store "sqlite:$db" --kek-file "$tmp/nope.kek"
mv "$db.kek" "$tmp/away.kek"
refuse "KEK beside an existing database missing" "missing, and the database exists" \
	"$TWAGD" --store "sqlite:$db"
if [ ! -e "$db.kek" ]; then ok "no new KEK written beside the database"; else no "a new KEK file was written"; fi
mv "$tmp/away.kek" "$db.kek"
cp "$db.kek" "$tmp/open.kek"
chmod 644 "$tmp/open.kek"
refuse "KEK file mode 0644" "group/others" "$TWAGD" --store "sqlite:$db" --kek-file "$tmp/open.kek"
printf 'not-a-key\n' >"$tmp/bad.kek"
chmod 600 "$tmp/bad.kek"
refuse "KEK file not hex" "64 hex digits" "$TWAGD" --store "sqlite:$db" --kek-file "$tmp/bad.kek"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$tmp/other.kek"
chmod 600 "$tmp/other.kek"
refuse "another KEK" "another KEK" "$TWAGD" --store "sqlite:$db" --kek-file "$tmp/other.kek"
refuse "TWAG_KEK wrong" "another KEK" env TWAG_KEK="$(cat "$tmp/other.kek")" "$TWAGD" --store "sqlite:$db"

# read-only: the store's directory bind-mounted read-only in a mount
# namespace of the test's own
if command -v unshare >/dev/null 2>&1 && unshare -m true 2>/dev/null; then
	refuse "database on a read-only file system" "not writable \(read-only file system\)" \
		unshare -m sh -c 'mount --bind "$0" "$0" && mount -o remount,ro,bind "$0" "$0" && exec "$@"' \
		"$tmp" "$TWAGD" --store "sqlite:$db"
else
	echo "note: store-faults: no mount namespace here: read-only case skipped"
fi

# the lock held by another process for longer than twagd waits
python3 - "$db" "$tmp/locked" <<'EOF' &
import sqlite3, sys, time, os
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=5)
c.execute("BEGIN EXCLUSIVE")
open(sys.argv[2], "w").close()
time.sleep(4)
c.execute("ROLLBACK")
EOF
lockp=$!
for i in $(seq 50); do [ -e "$tmp/locked" ] && break; sleep 0.05; done
refuse "database locked by another process" "another process holds the database's lock" \
	"$TWAGD" --store "sqlite:$db"
kill "$lockp" 2>/dev/null
wait "$lockp" 2>/dev/null

# a full file system: the store on a tmpfs of its own, filled up
mnt=$tmp/mnt
mkdir "$mnt"
if mount -t tmpfs -o size=1m tmpfs "$mnt" 2>/dev/null; then
	mounted=$mnt
	cp "$db" "$db.kek" "$mnt/"
	dd if=/dev/zero of="$mnt/fill" bs=4k 2>/dev/null
	timeout 10 "$TWAGD" --store "sqlite:$mnt/store.db" --listen 127.0.0.1:0 --client 127.0.0.1=s \
		>"$tmp/full.log" 2>&1 &
	fp=$!
	sleep 1
	if kill -0 "$fp" 2>/dev/null; then
		# it may start (reading needs no space); it must not have lost anything
		kill "$fp"
		wait "$fp"
		ok "full file system: twagd started and stopped (nothing to write yet)"
	else
		wait "$fp"
		rc=$?
		if [ $rc -ne 0 ] && grep -q 'event=start-failed' "$tmp/full.log"; then
			ok "full file system: refused with a start-failed line"
		else
			no "full file system: exit $rc without a start-failed line" "$tmp/full.log"
		fi
	fi
	rm -f "$mnt/fill"
	db_save=$db
	db=$mnt/store.db
	if snapshot >"$tmp/after" 2>&1 && cmp -s "$tmp/before" "$tmp/after" &&
		"$TWAG" store check --db "$db" >"$tmp/check" 2>&1; then
		ok "full file system: every subscriber and key as before, store check clean"
	else
		no "full file system: the store changed" "$tmp/after"
	fi
	db=$db_save
	umount "$mnt" && mounted=
else
	echo "note: store-faults: cannot mount a tmpfs here: full file system case skipped"
fi

# and with everything right, twagd starts
timeout 10 "$TWAGD" --store "sqlite:$db" --listen 127.0.0.1:0 --client 127.0.0.1=s >"$tmp/good.log" 2>&1 &
gp=$!
for i in $(seq 100); do grep -q 'event=ready' "$tmp/good.log" && break; sleep 0.05; done
if grep -q 'event=ready' "$tmp/good.log"; then ok "with the right KEK twagd starts"; else no "twagd did not start" "$tmp/good.log"; fi
kill "$gp" 2>/dev/null
wait "$gp" 2>/dev/null
finish
