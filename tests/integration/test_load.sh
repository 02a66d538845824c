#!/usr/bin/env bash
# tests/integration/test_load.sh — twag-load against the real twagd, and the
# kill -9 durability test (kill -9 under load, then a restart with zero SQN
# reuse: the peer's USIM sees no stale SQN).
#
#  1. 200 random Milenage subscribers (twag-load --gen) provisioned with one
#     command (`twag subscriber import`), twagd started, 2000 EAP-AKA'
#     attaches: no failure, every Access-Accept's MPPE keys equal to the
#     peer's MSK, and twagd's own counter says 2000 full AKA' attaches.
#  2. The detector works: five USIMs are moved ahead of the store (their
#     SEQ_MS raised in the --usim-state file); their next attach must be
#     reported as a sync failure (TS 33.102 Annex C.2), and after twagd's
#     resynchronisation a clean run has none.
#  3. kill -9 under load, three times: twag-load runs for a few seconds on
#     20 subscribers (so their SQN blocks are crossed often), twagd is
#     killed with SIGKILL at a random moment and restarted on the same
#     store while the load continues; the USIMs (state carried across runs
#     with --usim-state) must never see a stale SQN, and a clean run after
#     each restart must have no failure at all.
#     Before that, retransmissions: twagd frozen (SIGSTOP) for 1.5 s under
#     load; no attach fails and twagd counts our retransmissions as
#     duplicates (same Identifier and Request Authenticator, RFC 5080).
#  4. The same kill -9 quickly for EAP-AKA and for EAP-SIM (COMP128-1).
#     Then twagd with a subscriber cache of 16 for the 200 subscribers:
#     every attach succeeds, no stale SQN, records dropped and reused.
#  5. Control: the store rolled back to its state before the load (what
#     a store losing its SQN writes would do) must be caught as SQN reuse.
#  6. Our EAP-SIM peer against an independent server: FreeRADIUS 3.2 with
#     the same CSV turned into its users file (skipped, with a note, when
#     freeradius is not installed).
#
# Env: BUILD (build dir with twag, twagd, twag-load); TWAG_TEST_KEEP=1
# keeps the temp dir (outputs, logs) for a look. Loopback only; temp
# dir and every process removed/stopped on exit. Ends "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/lib.sh
lib_begin load twag-load-test 40
SECRET=load-test-secret
REALM=wlan.mnc001.mcc001.3gppnetwork.org

. "$root/tests/integration/load_freeradius.sh"

check() { # check "what" [detail-file] -- command...
	local what=$1 detail=$2
	shift 3
	if "$@"; then ok "$what"; else no "$what" "$detail"; fi
}
eq() { [ "$(val "$1" "$3")" = "$2" ]; }             # eq NAME VALUE FILE
gt0() { [ "$(val "$1" "$2")" -gt 0 ] 2>/dev/null; }  # gt0 NAME FILE

# start_twagd LOG N: twagd on $PORT over $tmp/store.db, ready when LOG
# holds N event=ready lines (restarts append to it); sets TWAGD_PID
start_twagd() {
	local log=$1 i
	"$TWAGD" --listen "127.0.0.1:$PORT" --store "sqlite:$tmp/store.db" \
		--client "127.0.0.1=$SECRET" --network-name WLAN --threads 2 \
		--metrics "127.0.0.1:$MPORT" ${TWAGD_EXTRA:-} >>"$log" 2>&1 &
	TWAGD_PID=$!
	for i in $(seq 1 200); do
		[ "$(grep -c 'event=ready' "$log" 2>/dev/null)" -ge "$2" ] && return 0
		kill -0 "$TWAGD_PID" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

metric() { # metric 'NAME{LABELS}' -> value (integer part)
	python3 - "$MPORT" "$1" <<'EOF'
import sys, urllib.request
port, name = sys.argv[1], sys.argv[2]
body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=3).read().decode()
for line in body.splitlines():
    if line.startswith(name + " "):
        print(int(float(line.split()[-1])))
        break
EOF
}

load() { # load OUTFILE ARGS... (server, secret and realm given)
	local out=$1
	shift
	"$LOAD" --server "127.0.0.1:$PORT" --secret "$SECRET" --realm "$REALM" "$@" >"$out" 2>&1
}

# Moves SEQ_MS(0) of the first n USIMs of a state file ahead by 2^20.
bump_usims() { # bump_usims FILE N
	python3 - "$1" "$2" <<'EOF'
import sys
path, n = sys.argv[1], int(sys.argv[2])
out, done = [], 0
for line in open(path):
    f = line.split()
    if line.startswith("#") or len(f) < 2 or done >= n:
        out.append(line)
        continue
    ent = dict(e.split(":") for e in f[2:])
    ent["0"] = "%x" % (int(ent.get("0", "0"), 16) + (1 << 20))
    out.append(" ".join(f[:2] + ["%s:%s" % kv for kv in sorted(ent.items())]) + "\n")
    done += 1
open(path, "w").writelines(out)
EOF
}

# ---- 0. tools --------------------------------------------------------------
for b in "$TWAG" "$TWAGD" "$LOAD"; do
	if [ -x "$b" ]; then ok "$b present"; else no "$b missing (make $b)"; fi
done
[ "$fail" -eq 0 ] || finish
"$LOAD" --server 127.0.0.1:1 --secret x --method nope --subscribers x --attaches 1 >/dev/null 2>"$tmp/usage.err"
rc=$?
if [ $rc -eq 2 ] && grep -q -- "--method" "$tmp/usage.err"; then
	ok "bad usage exits 2 naming the option"
else
	no "bad --method: exit $rc, want 2 and a message naming --method" "$tmp/usage.err"
fi

PORT=$(free_port) || { no "no free port"; finish; }
MPORT=$(free_port) || { no "no free port"; finish; }

# ---- 1. provisioning and 2000 AKA' attaches --------------------------------
"$LOAD" --gen 200 --gen-csv "$tmp/aka.csv" --gen-algo milenage --imsi-base 001017000000000 >"$tmp/gen.out" 2>&1
check "generate 200 Milenage subscribers" "$tmp/gen.out" -- \
	test "$(grep -c '^00101700000' "$tmp/aka.csv")" -eq 200
"$LOAD" --gen 20 --gen-csv "$tmp/sim.csv" --gen-algo comp128v1 --imsi-base 001017100000000 >>"$tmp/gen.out" 2>&1
check "generate 20 COMP128-1 subscribers" "$tmp/gen.out" -- \
	test "$(grep -c ',comp128v1,' "$tmp/sim.csv")" -eq 20
"$TWAG" subscriber import --db "$tmp/store.db" --csv "$tmp/aka.csv" >"$tmp/import.out" 2>&1 &&
	"$TWAG" subscriber import --db "$tmp/store.db" --csv "$tmp/sim.csv" >>"$tmp/import.out" 2>&1
check "twag subscriber import of both CSVs" "$tmp/import.out" -- test $? -eq 0
"$TWAG" subscriber list --db "$tmp/store.db" >"$tmp/list.out" 2>&1
check "220 subscribers in the store" "$tmp/list.out" -- test "$(grep -c '^00101' "$tmp/list.out")" -eq 220

# a consistent copy of the store before any vector: the "lost writes" control
cp "$tmp/store.db" "$tmp/store.db.snapshot"
[ -f "$tmp/store.db-wal" ] && cp "$tmp/store.db-wal" "$tmp/store.db.snapshot-wal"
if ! start_twagd "$tmp/twagd.log" 1; then
	no "twagd did not start" "$tmp/twagd.log"
	finish
fi
ok "twagd started"

load "$tmp/run1.out" --method aka-prime --subscribers "$tmp/aka.csv" --attaches 2000 \
	--concurrency 64 --usim-state "$tmp/usim.state"
rc=$?
check "2000 AKA' attaches: exit 0" "$tmp/run1.out" -- test $rc -eq 0
check "2000 AKA' attaches: ok=2000" "$tmp/run1.out" -- eq ok 2000 "$tmp/run1.out"
check "2000 AKA' attaches: failed=0" "$tmp/run1.out" -- eq failed 0 "$tmp/run1.out"
check "MPPE keys equal the peer's MSK in every Accept" "$tmp/run1.out" -- \
	eq fail_mppe_mismatch 0 "$tmp/run1.out"
check "no stale SQN seen" "$tmp/run1.out" -- eq sync_events 0 "$tmp/run1.out"
n=$(metric 'twag_attaches_total{method="aka-prime",kind="full"}' 2>"$tmp/metric.err")
echo "metric twag_attaches_total{aka-prime,full} = ${n:-none}" >>"$tmp/metric.err"
check "twagd counted 2000 full AKA' attaches" "$tmp/metric.err" -- test "${n:-0}" = 2000
# 64 phones at once: receive batches carry several Identity responses, whose
# challenges twagd builds together (tw_aka_server_vector_many); with
# AVX-512 their key hierarchies and AT_MACs run in lockstep lanes, and the
# checks above (every MSK, no failure) are then on that path
nb=$(metric 'twag_aka_batched_challenges_total' 2>>"$tmp/metric.err")
echo "metric twag_aka_batched_challenges_total = ${nb:-none}" >>"$tmp/metric.err"
if "$TWAG" cpu | grep -q '^level=avx512'; then
	check "AKA' challenges computed in lanes (AVX-512 here)" "$tmp/metric.err" -- test "${nb:-0}" -gt 0
else
	check "no lanes without AVX-512 (one by one)" "$tmp/metric.err" -- test "${nb:-0}" = 0
fi

# each phone's first vector needs its SQN block made durable; those of one
# receive batch share one commit (tw_store_aka_vectors), none is made
# one by one on the vector path
rb=$(metric 'twag_store_reservations_batched_total' 2>>"$tmp/metric.err")
rc_=$(metric 'twag_store_reservation_batch_commits_total' 2>>"$tmp/metric.err")
rs=$(metric 'twag_store_reservations_sync_total' 2>>"$tmp/metric.err")
echo "metric reservations batched = ${rb:-none} in ${rc_:-none} commits, one by one = ${rs:-none}" >>"$tmp/metric.err"
check "first vectors' reservations batched, several per commit" "$tmp/metric.err" -- \
	test "${rb:-0}" -gt 0 -a "${rc_:-0}" -gt 0 -a "${rc_:-0}" -lt "${rb:-0}" -a "${rs:-1}" = 0

# the identities those attaches minted reach SQLite in write-behind rounds
# (one transaction each, at the store's period), which /metrics counts
for i in $(seq 60); do
	nr=$(metric 'twag_store_identity_rounds_total' 2>>"$tmp/metric.err")
	[ "${nr:-0}" -gt 0 ] && break
	sleep 0.1
done
nw=$(metric 'twag_store_identity_rows_written_total' 2>>"$tmp/metric.err")
echo "metric twag_store_identity_rounds_total = ${nr:-none}, rows written = ${nw:-none}" >>"$tmp/metric.err"
check "identity write-behind rounds counted, rows written" "$tmp/metric.err" -- \
	test "${nr:-0}" -gt 0 -a "${nw:-0}" -gt 0

# ---- 2. the sync detector fires when a USIM is ahead ------------------------
bump_usims "$tmp/usim.state" 5
load "$tmp/run2.out" --method aka-prime --subscribers "$tmp/aka.csv" --attaches 200 \
	--concurrency 64 --usim-state "$tmp/usim.state"
rc=$?
check "USIMs ahead: exit 1" "$tmp/run2.out" -- test $rc -eq 1
check "USIMs ahead: 5 sync failures reported" "$tmp/run2.out" -- eq fail_sync_failure 5 "$tmp/run2.out"
check "USIMs ahead: 5 AUTS sent" "$tmp/run2.out" -- eq sync_events 5 "$tmp/run2.out"
load "$tmp/run3.out" --method aka-prime --subscribers "$tmp/aka.csv" --attaches 400 \
	--concurrency 64 --usim-state "$tmp/usim.state"
rc=$?
check "after resync: clean run" "$tmp/run3.out" -- test $rc -eq 0 -a "$(val failed "$tmp/run3.out")" = 0

# ---- 3./4. kill -9 under load ------------------------------------------------
head -21 "$tmp/aka.csv" >"$tmp/aka20.csv"
cp "$tmp/usim.state" "$tmp/usim20.state"
ready=1
# kill_round LABEL METHOD CSV SECONDS
kill_round() {
	local label=$1 method=$2 csv=$3 secs=$4 lp delay out
	out=$tmp/kill-$(printf '%s' "$label" | tr -c 'A-Za-z0-9' _).out
	"$LOAD" --server "127.0.0.1:$PORT" --secret "$SECRET" --realm "$REALM" \
		--method "$method" --subscribers "$csv" --time "$secs" --concurrency 20 \
		--usim-state "$tmp/usim-$method.state" >"$out" 2>&1 &
	lp=$!
	# a random moment between 0.8 and 1.8 s into the run
	delay=$(awk -v r="$RANDOM" 'BEGIN { printf "%.2f", 0.8 + (r % 100) / 100 }')
	sleep "$delay"
	kill -9 "$TWAGD_PID"
	wait "$TWAGD_PID" 2>/dev/null
	ready=$((ready + 1))
	if ! start_twagd "$tmp/twagd.log" "$ready"; then
		no "$label: twagd did not restart after kill -9" "$tmp/twagd.log"
		wait "$lp"
		return
	fi
	wait "$lp"
	if [ "$method" = sim ]; then
		check "$label: load continued after the restart" "$out" -- gt0 ok "$out"
	else
		check "$label: the USIMs saw no stale SQN (zero reuse)" "$out" -- \
			eq sync_events 0 "$out"
		check "$label: no sync failure" "$out" -- eq fail_sync_failure 0 "$out"
	fi
	check "$label: the kill hit attaches in flight" "$out" -- \
		test "$(val retransmits "$out")" -gt 0 -o "$(val failed "$out")" -gt 0
	# and with the same USIMs, a clean run on the restarted server
	load "$out.after" --method "$method" --subscribers "$csv" --attaches 400 \
		--concurrency 20 --usim-state "$tmp/usim-$method.state"
	local rc=$?
	check "$label: clean run after restart (exit 0, no failure)" "$out.after" -- \
		test $rc -eq 0 -a "$(val failed "$out.after")" = 0 -a "$(val ok "$out.after")" = 400
}
cp "$tmp/usim20.state" "$tmp/usim-aka-prime.state"

# Retransmissions (RFC 5080 §2.2.1): twagd frozen (SIGSTOP) for 1.5 s under
# load; our retransmissions carry the same Identifier and Request
# Authenticator, so twagd counts them as duplicates and answers them from
# its cache, and no attach fails.
dup0=$(metric 'twag_radius_duplicate_requests_total' 2>/dev/null)
load "$tmp/stop.out" --method aka-prime --subscribers "$tmp/aka20.csv" --time 3 \
	--concurrency 20 --usim-state "$tmp/usim-aka-prime.state" &
lp=$!
sleep 0.8
kill -STOP "$TWAGD_PID"
sleep 1.5
kill -CONT "$TWAGD_PID"
wait "$lp"
rc=$?
dup1=$(metric 'twag_radius_duplicate_requests_total' 2>/dev/null)
echo "duplicates before ${dup0:-none} after ${dup1:-none}" >>"$tmp/stop.out"
check "server frozen 1.5 s: every attach still succeeds" "$tmp/stop.out" -- \
	test $rc -eq 0 -a "$(val failed "$tmp/stop.out")" = 0
check "server frozen 1.5 s: requests were retransmitted" "$tmp/stop.out" -- gt0 retransmits "$tmp/stop.out"
check "retransmissions seen by twagd as duplicates (same id and authenticator)" "$tmp/stop.out" -- \
	test "${dup1:-0}" -gt "${dup0:-0}"

for i in 1 2 3; do
	kill_round "kill -9 #$i (AKA')" aka-prime "$tmp/aka20.csv" 3
done
cp "$tmp/usim-aka-prime.state" "$tmp/usim-aka.state"
kill_round "kill -9 (AKA)" aka "$tmp/aka20.csv" 2
kill_round "kill -9 (SIM)" sim "$tmp/sim.csv" 2
"$TWAG" subscriber show --db "$tmp/store.db" --imsi 001017000000000 >"$tmp/show.out" 2>&1
check "store readable after the kills" "$tmp/show.out" -- grep -q '^sqn_reserved=' "$tmp/show.out"

kill "$TWAGD_PID" 2>/dev/null
wait "$TWAGD_PID" 2>/dev/null

# A subscriber cache smaller than the subscribers (--subscriber-cache 16,
# 200 phones): records are dropped and loaded again all the time, an AKA'
# subscriber's from its durable mark (the rest of its block skipped), and
# the memory of dropped ones is reused. Every attach must succeed, no USIM
# may see a stale SQN, and at most about 16 stay loaded.
ready=$((ready + 1))
if TWAGD_EXTRA="--subscriber-cache 16" start_twagd "$tmp/twagd.log" "$ready"; then
	load "$tmp/cache.out" --method aka-prime --subscribers "$tmp/aka.csv" --attaches 1000 \
		--concurrency 32 --usim-state "$tmp/usim.state"
	rc=$?
	check "cache of 16 for 200: 1000 attaches, none failed" "$tmp/cache.out" -- \
		test $rc -eq 0 -a "$(val failed "$tmp/cache.out")" = 0 -a "$(val ok "$tmp/cache.out")" = 1000
	check "cache of 16 for 200: no stale SQN" "$tmp/cache.out" -- eq sync_events 0 "$tmp/cache.out"
	ev=$(metric 'twag_store_subscribers_evicted_total' 2>"$tmp/cache.err")
	ru=$(metric 'twag_store_records_reused_total' 2>>"$tmp/cache.err")
	ld=$(metric 'twag_store_subscribers_loaded' 2>>"$tmp/cache.err")
	echo "evicted ${ev:-none} reused ${ru:-none} loaded ${ld:-none}" >>"$tmp/cache.err"
	check "cache of 16 for 200: dropped and reused, about 16 loaded" "$tmp/cache.err" -- \
		test "${ev:-0}" -ge 184 -a "${ru:-0}" -gt 0 -a "${ld:-99}" -le 20
	kill "$TWAGD_PID" 2>/dev/null
	wait "$TWAGD_PID" 2>/dev/null
else
	no "twagd --subscriber-cache 16 did not start" "$tmp/twagd.log"
fi

# Control: a store that lost its writes (rolled back to the copy made after
# provisioning) re-issues old SQNs; the USIMs must see them as stale.
rm -f "$tmp/store.db-wal" "$tmp/store.db-shm"
cp "$tmp/store.db.snapshot" "$tmp/store.db"
[ -f "$tmp/store.db.snapshot-wal" ] && cp "$tmp/store.db.snapshot-wal" "$tmp/store.db-wal"
ready=$((ready + 1))
if start_twagd "$tmp/twagd.log" "$ready"; then
	load "$tmp/rollback.out" --method aka-prime --subscribers "$tmp/aka20.csv" --attaches 40 \
		--concurrency 20 --usim-state "$tmp/usim-aka.state"
	rc=$?
	check "rolled-back store: the reuse is detected (20 sync failures, exit 1)" "$tmp/rollback.out" -- \
		test $rc -eq 1 -a "$(val fail_sync_failure "$tmp/rollback.out")" = 20
	kill "$TWAGD_PID" 2>/dev/null
	wait "$TWAGD_PID" 2>/dev/null
else
	no "twagd did not start on the rolled-back store" "$tmp/twagd.log"
fi

# ---- 5. our EAP-SIM peer against FreeRADIUS ---------------------------------
if command -v freeradius >/dev/null 2>&1; then
	FPORT=$(free_port)
	if load_fr_config "$tmp/fr" "$tmp/sim.csv" "$FPORT" "$SECRET" "$REALM" 2 &&
		load_fr_start "$tmp/fr" "$tmp/fr.log"; then
		"$LOAD" --server "127.0.0.1:$FPORT" --secret "$SECRET" --realm "$REALM" --method sim \
			--subscribers "$tmp/sim.csv" --attaches 500 --concurrency 20 >"$tmp/fr.out" 2>&1
		rc=$?
		check "EAP-SIM against FreeRADIUS: 500 attaches, MPPE keys = MSK" "$tmp/fr.out" -- \
			test $rc -eq 0 -a "$(val ok "$tmp/fr.out")" = 500
		"$LOAD" --server "127.0.0.1:$FPORT" --secret wrong-secret --realm "$REALM" --method sim \
			--subscribers "$tmp/sim.csv" --attaches 1 --concurrency 1 --drain 0.5 >"$tmp/fr2.out" 2>&1
		rc=$?
		check "wrong secret is not a success" "$tmp/fr2.out" -- test $rc -eq 1 -a "$(val ok "$tmp/fr2.out")" = 0
		kill "$FR_PID" 2>/dev/null
		wait "$FR_PID" 2>/dev/null
	else
		no "freeradius did not start" "$tmp/fr.log"
	fi
else
	echo "note: load: freeradius not installed: EAP-SIM cross-check against FreeRADIUS skipped"
fi

finish
