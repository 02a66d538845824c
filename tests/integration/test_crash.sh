#!/usr/bin/env bash
# tests/integration/test_crash.sh — crash consistency: kill -9 at random
# moments, repeated, while twagd serves full authentications and
# resynchronisations and `twag subscriber import` provisions.
#
# Each of ROUNDS rounds (default 50, TWAG_CRASH_ROUNDS):
#   - twag-load runs EAP-AKA' full authentications on 20 phones (USIM state
#     carried across rounds with --usim-state) and, every third round, a
#     second twag-load on 4 other phones moved ahead of the store (their
#     SEQ_MS raised), so AUTS resynchronisations are in flight;
#   - `twag subscriber import` of a fresh batch of 300 subscribers starts at
#     a random moment and is itself killed with SIGKILL at a random moment
#     (or finishes first);
#   - twagd is killed with SIGKILL at a random moment in the round (now and
#     then while it is still opening the store), then:
#       * `twag store check` finds no problem (SQLite's integrity check,
#         every row decoded, every key wrap opens, SEQ_HE <= durable mark);
#       * the batch is in the store whole or not at all;
#     and twagd is started again on the same store while the load goes on.
#   After each round the 20 phones' USIMs must have seen no stale SQN
#   (an SQN issued twice would be refused by a USIM as not fresh, TS 33.102
#   Annex C.2), and at the end a clean run over all 24 phones has no
#   failure and no resynchronisation: every resync that was answered was
#   durable.
#
# Loopback only; temp dir and processes removed on exit; bounded (about
# 2 s a round). Ends "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/lib.sh
lib_begin crash twag-crash-test 30
SECRET=crash-test-secret
REALM=wlan.mnc001.mcc001.3gppnetwork.org
ROUNDS=${TWAG_CRASH_ROUNDS:-50}

# a random number of milliseconds in [lo, hi] as seconds for sleep
rnd_s() { awk -v lo="$1" -v hi="$2" -v r="$RANDOM" 'BEGIN { printf "%.3f", (lo + r % (hi - lo + 1)) / 1000 }'; }

start_twagd() { # start in the background; TWAGD_PID
	"$TWAGD" --listen "127.0.0.1:$PORT" --store "sqlite:$tmp/store.db" \
		--client "127.0.0.1=$SECRET" --network-name WLAN --threads 2 --sqn-block 16 --resync-max 1000 \
		>>"$tmp/twagd.log" 2>&1 &
	TWAGD_PID=$!
}
wait_ready() { # wait_ready N: the log holds N event=ready lines
	local i
	for i in $(seq 1 200); do
		[ "$(grep -c 'event=ready' "$tmp/twagd.log" 2>/dev/null)" -ge "$1" ] && return 0
		kill -0 "$TWAGD_PID" 2>/dev/null || return 1
		sleep 0.02
	done
	return 1
}

bump_usims() { # bump_usims FILE: SEQ_MS(0) of every USIM in FILE ahead by 2^20
	python3 - "$1" <<'EOF'
import sys
path = sys.argv[1]
out = []
for line in open(path):
    f = line.split()
    if line.startswith("#") or len(f) < 2:
        out.append(line)
        continue
    ent = dict(e.split(":") for e in f[2:])
    ent["0"] = "%x" % (int(ent.get("0", "0"), 16) + (1 << 20))
    out.append(" ".join(f[:2] + ["%s:%s" % kv for kv in sorted(ent.items())]) + "\n")
open(path, "w").writelines(out)
EOF
}

for b in "$TWAG" "$TWAGD" "$LOAD"; do
	[ -x "$b" ] || { no "$b missing"; finish; }
done
PORT=$(free_port) || { no "no free port"; finish; }

"$LOAD" --gen 24 --gen-csv "$tmp/all.csv" --gen-algo milenage --imsi-base 001018000000000 \
	>"$tmp/gen.out" 2>&1
head -21 "$tmp/all.csv" >"$tmp/main.csv"
{ head -1 "$tmp/all.csv"; tail -4 "$tmp/all.csv"; } >"$tmp/resync.csv"
"$TWAG" subscriber import --db "$tmp/store.db" --csv "$tmp/all.csv" >"$tmp/import0.out" 2>&1 ||
	{ no "initial import" "$tmp/import0.out"; finish; }
# the USIM state files, one run each to create them
start_twagd
ready=1
wait_ready $ready || { no "twagd did not start" "$tmp/twagd.log"; finish; }
"$LOAD" --server "127.0.0.1:$PORT" --secret "$SECRET" --realm "$REALM" --method aka-prime \
	--subscribers "$tmp/all.csv" --attaches 48 --concurrency 24 \
	--usim-state "$tmp/usim.state" >"$tmp/first.out" 2>&1 ||
	{ no "first run" "$tmp/first.out"; finish; }
grep -v '^00101800000002[0-3] ' "$tmp/usim.state" >"$tmp/usim-main.state"
grep -E '^#|^00101800000002[0-3] ' "$tmp/usim.state" >"$tmp/usim-resync.state"

kills=0 kills_starting=0 imports_whole=0 imports_none=0 resync_rounds=0 resync_ok=0 resync_syncs=0
# the shell's own "Killed" notices for the imports killed on purpose: off
# (every command's output goes to a file; the verdicts go to stdout)
exec 4>&2 2>/dev/null
for r in $(seq 1 "$ROUNDS"); do
	out=$tmp/round$r
	# the fresh batch of this round
	"$LOAD" --gen 300 --gen-csv "$out.batch.csv" --gen-algo milenage \
		--imsi-base "0010190$(printf '%03d' "$r")00000" >/dev/null 2>&1
	"$LOAD" --server "127.0.0.1:$PORT" --secret "$SECRET" --realm "$REALM" \
		--method aka-prime --subscribers "$tmp/main.csv" --time 1.2 --concurrency 20 \
		--usim-state "$tmp/usim-main.state" >"$out.load" 2>&1 &
	lp=$!
	rp=
	if [ $((r % 3)) -eq 0 ]; then
		bump_usims "$tmp/usim-resync.state"
		resync_rounds=$((resync_rounds + 1))
		"$LOAD" --server "127.0.0.1:$PORT" --secret "$SECRET" --realm "$REALM" \
			--method aka-prime --subscribers "$tmp/resync.csv" --attaches 8 \
			--concurrency 4 --usim-state "$tmp/usim-resync.state" >"$out.resync" 2>&1 &
		rp=$!
	fi
	# provisioning, killed at a random moment (or done first)
	sleep "$(rnd_s 0 400)"
	"$TWAG" subscriber import --db "$tmp/store.db" --csv "$out.batch.csv" >"$out.import" 2>&1 &
	ip=$!
	sleep "$(rnd_s 0 30)"
	{ kill -9 "$ip"; } 2>/dev/null
	# twagd killed at a random moment of the load
	sleep "$(rnd_s 0 500)"
	{
		kill -9 "$TWAGD_PID"
		wait "$TWAGD_PID"
		wait "$ip"
	} 2>/dev/null
	kills=$((kills + 1))
	# every fourth round, once more while it opens the store again
	if [ $((r % 4)) -eq 0 ]; then
		start_twagd
		sleep "$(rnd_s 0 60)"
		{
			kill -9 "$TWAGD_PID"
			wait "$TWAGD_PID"
		} 2>/dev/null
		kills_starting=$((kills_starting + 1))
	fi
	"$TWAG" store check --db "$tmp/store.db" >"$out.check" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && [ "$(val problems "$out.check")" = 0 ]; then
		ok "round $r: store check clean after kill -9"
	else
		no "round $r: store check after kill -9 (exit $rc)" "$out.check"
	fi
	"$TWAG" subscriber list --db "$tmp/store.db" >"$out.list" 2>&1
	nb=$(grep -c "^0010190$(printf '%03d' "$r")" "$out.list")
	if [ "$nb" -eq 0 ] || [ "$nb" -eq 300 ]; then
		ok "round $r: the batch imported whole or not at all ($nb of 300)"
		[ "$nb" -eq 300 ] && imports_whole=$((imports_whole + 1)) || imports_none=$((imports_none + 1))
	else
		no "round $r: $nb of 300 subscribers of a killed import in the store" "$out.import"
	fi
	start_twagd
	ready=$((ready + 1))
	wait_ready $ready || { no "round $r: twagd did not restart" "$tmp/twagd.log"; finish; }
	wait "$lp"
	if [ -n "$rp" ]; then
		wait "$rp"
		resync_ok=$((resync_ok + $(val ok "$out.resync")))
		resync_syncs=$((resync_syncs + $(val sync_events "$out.resync")))
	fi
	if [ "$(val sync_events "$out.load")" = 0 ] && [ "$(val fail_sync_failure "$out.load")" = 0 ] &&
		[ -n "$(val ok "$out.load")" ]; then
		ok "round $r: no USIM saw a stale SQN"
	else
		no "round $r: stale SQN seen (SQN issued twice?)" "$out.load"
	fi
done

if [ "$resync_syncs" -ge "$resync_rounds" ] && [ "$resync_ok" -gt 0 ]; then
	ok "resyncs in flight: $resync_syncs AUTS sent, $resync_ok attaches after them succeeded"
else
	no "resync rounds: $resync_syncs AUTS, $resync_ok attaches succeeded"
fi

exec 2>&4 4>&-

# every resync answered was durable: a clean run over all 24 phones
cat "$tmp/usim-main.state" >"$tmp/usim-end.state"
grep -v '^#' "$tmp/usim-resync.state" >>"$tmp/usim-end.state"
"$LOAD" --server "127.0.0.1:$PORT" --secret "$SECRET" --realm "$REALM" --method aka-prime \
	--subscribers "$tmp/all.csv" --attaches 240 --concurrency 24 \
	--usim-state "$tmp/usim-end.state" >"$tmp/end.out" 2>&1
rc=$?
# the resync phones may still be ahead if their last round's AUTS was never
# answered (twagd killed first): each then resyncs once, cleanly
ns=$(val sync_events "$tmp/end.out")
if [ $rc -eq 0 ] && [ "$(val failed "$tmp/end.out")" = 0 ] && [ "${ns:-99}" -le 4 ]; then
	ok "after $ROUNDS rounds: 240 attaches, none failed ($ns resyncs of the 4 phones moved ahead)"
else
	no "after $ROUNDS rounds: clean run (exit $rc)" "$tmp/end.out"
fi
"$LOAD" --server "127.0.0.1:$PORT" --secret "$SECRET" --realm "$REALM" --method aka-prime \
	--subscribers "$tmp/all.csv" --attaches 96 --concurrency 24 \
	--usim-state "$tmp/usim-end.state" >"$tmp/end2.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ "$(val failed "$tmp/end2.out")" = 0 ] && [ "$(val sync_events "$tmp/end2.out")" = 0 ]; then
	ok "and then no resync at all: the store is ahead of every USIM"
else
	no "second clean run (exit $rc)" "$tmp/end2.out"
fi
kill "$TWAGD_PID" 2>/dev/null
wait "$TWAGD_PID" 2>/dev/null
"$TWAG" store check --db "$tmp/store.db" >"$tmp/end.check" 2>&1 &&
	ok "store check after a clean stop" || no "store check after a clean stop" "$tmp/end.check"
echo "note: crash: $kills kills under load, $kills_starting while opening, $resync_rounds rounds with resyncs, imports killed: $imports_none none, $imports_whole whole"
if [ "$imports_none" -gt 0 ] && [ "$imports_whole" -gt 0 ] || [ "$ROUNDS" -lt 10 ]; then
	ok "kills hit imports before and after their commit"
else
	no "the kills never split imports both ways ($imports_none none, $imports_whole whole)"
fi
finish
