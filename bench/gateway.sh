#!/usr/bin/env bash
# bench/gateway.sh [BUILD] — the gateway benchmark, on this machine:
#
#  (a) FreeRADIUS 3.2 (Debian `freeradius`, EAP-SIM, COMP128-1 from its
#      users file) and twagd, each driven by radeapclient (Debian
#      `freeradius-utils`) with the SAME input file (N_AUTH full EAP-SIM
#      authentications over N_SUBS subscribers, -p 64): server CPU time per
#      authentication = delta of utime+stime in /proc/PID/stat / accepted;
#      twagd both as configured by default and with identity privacy off
#      (--no-pseudonyms --no-fast-reauth, as FreeRADIUS's EAP-SIM);
#  (b) twagd EAP-AKA' under twag-load (N_AKA_SUBS Milenage subscribers,
#      LOAD_TIME seconds, a few thread/concurrency settings): attaches/s end
#      to end and server CPU µs per attach (privacy on and off).
#
# Writes bench/GATEWAY.md (date, commit, machine, tables, targets met or
# not) and prints it. Loopback only; everything lives in a temp dir that is
# removed at the end; every process started here is stopped here.
#
# Environment: N_AUTH (50000), N_WARM (12000: uncounted EAP-SIM
# authentications before each measured run), N_SUBS (2000), N_AKA_SUBS (20000),
# LOAD_TIME (8), ROUNDS (5: interleaved rounds of the EAP-SIM rows),
# OUT (bench/GATEWAY.md).
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 2
root=$PWD
N_AUTH=${N_AUTH:-50000}
N_WARM=${N_WARM:-12000}
N_SUBS=${N_SUBS:-2000}
N_AKA_SUBS=${N_AKA_SUBS:-20000}
LOAD_TIME=${LOAD_TIME:-8}
ROUNDS=${ROUNDS:-5}
OUT=${OUT:-bench/GATEWAY.md}
TWAG=$root/$build/twag
TWAGD=$root/$build/twagd
LOAD=$root/$build/twag-load
SECRET=gwbench-secret
REALM=wlan.mnc001.mcc001.3gppnetwork.org
CLK_TCK=$(getconf CLK_TCK)
calc() { awk "BEGIN { print ($1) }"; }   # calc 'EXPR' (floating point)
calcf() { awk "BEGIN { printf \"$1\", $2 }"; } # calcf FORMAT 'EXPR'

. "$root/tests/integration/load_freeradius.sh"

for b in "$TWAG" "$TWAGD" "$LOAD"; do
	[ -x "$b" ] || { echo "gateway.sh: $b missing (make $build/twag $build/twagd $build/twag-load)" >&2; exit 2; }
done
for c in freeradius radeapclient; do
	command -v "$c" >/dev/null || { echo "gateway.sh: $c missing (scripts/deps.sh bench)" >&2; exit 2; }
done

tmp=$(mktemp -d /tmp/twag-gwbench.XXXXXX)
# our children still running only (the shell's job table)
cleanup() {
	local p
	for p in $(jobs -p); do kill "$p" 2>/dev/null; done
	for p in $(jobs -p); do wait "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# free_port (a port nobody uses on 127.0.0.1); the file only defines functions
. tests/integration/lib.sh

cpu_ticks() { # utime + stime of $1 (proc(5) fields 14, 15, after the comm)
	sed -E 's/^.*\) //' "/proc/$1/stat" | awk '{print $12 + $13}'
}
user_ticks() { # utime of $1 alone (the rest is the kernel's: system calls)
	sed -E 's/^.*\) //' "/proc/$1/stat" | awk '{print $12}'
}

# start_twagd DB PORT LOG ARGS... : sets TWAGD_PID, waits for event=ready
start_twagd() {
	local db=$1 port=$2 log=$3 i
	shift 3
	"$TWAGD" --listen "127.0.0.1:$port" --store "sqlite:$db" --client "127.0.0.1=$SECRET" \
		--network-name WLAN --log-level warn "$@" >"$log" 2>&1 &
	TWAGD_PID=$!
	# --log-level warn hides the event=ready line: wait for the bound
	# socket instead, then give the workers a moment
	for i in $(seq 1 100); do
		if grep -q "event=ready" "$log" 2>/dev/null ||
			ss -Hlunp "sport = :$port" 2>/dev/null | grep -q "pid=$TWAGD_PID,"; then
			sleep 0.3
			return 0
		fi
		kill -0 "$TWAGD_PID" 2>/dev/null || break
		sleep 0.1
	done
	echo "gateway.sh: twagd did not start:" >&2
	tail -5 "$log" >&2
	return 1
}

stop_pid() {
	kill "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# run_radeap PID PORT: a warm-up pass (N_WARM authentications, not
# counted: the server's tables and caches reach their steady state, e.g.
# twagd's duplicate-cache ring goes round once), then radeapclient over the
# shared input; prints "accepted denied wall_s cpu_s user_s"
run_radeap() {
	local pid=$1 port=$2 c0 c1 u0 u1 t0 t1 out acc den
	radeapclient -q -s -p 64 -r 3 -t 5 -f "$tmp/radeap-warm.in" "127.0.0.1:$port" auth "$SECRET" \
		>/dev/null 2>&1
	c0=$(cpu_ticks "$pid")
	u0=$(user_ticks "$pid")
	t0=$(date +%s.%N)
	out=$(radeapclient -q -s -p 64 -r 3 -t 5 -f "$tmp/radeap.in" "127.0.0.1:$port" auth "$SECRET" 2>&1)
	t1=$(date +%s.%N)
	c1=$(cpu_ticks "$pid")
	u1=$(user_ticks "$pid")
	acc=$(printf '%s\n' "$out" | sed -nE 's/.*Total approved auths: *([0-9]+).*/\1/p')
	den=$(printf '%s\n' "$out" | sed -nE 's/.*Total denied auths: *([0-9]+).*/\1/p')
	echo "${acc:-0} ${den:-0} $(calc "$t1 - $t0") $(calc "($c1 - $c0) / $CLK_TCK") $(calc "($u1 - $u0) / $CLK_TCK")"
}

echo "== (a) EAP-SIM: FreeRADIUS and twagd under radeapclient ($N_AUTH authentications)" >&2
"$LOAD" --gen "$N_SUBS" --gen-csv "$tmp/sim.csv" --gen-algo comp128v1 >/dev/null || exit 1
# N_AUTH blocks cycling over the subscribers: with -p 64
# and N_SUBS >> 64 no subscriber has two authentications in flight
awk -F, -v n="$N_AUTH" -v realm="$REALM" '
	BEGIN { m = 0 }
	NR > 1 { imsi[m] = $1; ki[m] = $3; m++ }
	END {
		for (i = 0; i < n; i++) {
			j = i % m
			id = "1" imsi[j] "@" realm
			printf "User-Name = \"%s\"\nEAP-Code = Response\nEAP-Id = 1\n", id
			printf "EAP-Type-Identity = \"%s\"\nEAP-Sim-Ki = 0x%s\n", id, ki[j]
			printf "Message-Authenticator = 0x00\n\n"
		}
	}' "$tmp/sim.csv" >"$tmp/radeap.in"
# the warm-up input: the first N_WARM authentications of the same file
awk -v n="$N_WARM" 'BEGIN { RS = ""; ORS = "\n\n" } NR <= n' "$tmp/radeap.in" >"$tmp/radeap-warm.in"

"$TWAG" subscriber import --db "$tmp/sim.db" --csv "$tmp/sim.csv" >/dev/null || exit 1
fr_version=$(freeradius -v 2>/dev/null | sed -nE 's/.*FreeRADIUS Version ([0-9.]+).*/\1/p' | head -1)
# FreeRADIUS, then twagd five ways: as configured by default (identity
# privacy: a fresh pseudonym and fast re-auth id stored per full
# authentication), with volatile identities, without privacy (FreeRADIUS's
# EAP-SIM issues neither), and with a shorter receive-coalescing period
# and without it (their effect, measured in the same run). The rows are
# measured in ROUNDS interleaved rounds: this machine's speed drifts within
# minutes, so each round's rows are compared with each other and the
# report takes the median round.
NOPRIV="--no-pseudonyms --no-fast-reauth"
declare -A res
for ((round = 1; round <= ROUNDS; round++)); do
	echo "   round $round of $ROUNDS" >&2
	port=$(free_port) || exit 1
	load_fr_config "$tmp/fr" "$tmp/sim.csv" "$port" "$SECRET" "$REALM" 2 || exit 1
	load_fr_start "$tmp/fr" "$tmp/fr.log" || { echo "gateway.sh: freeradius did not start" >&2; tail -20 "$tmp/fr.log" >&2; exit 1; }
	res[fr,$round]=$(run_radeap "$FR_PID" "$port")
	stop_pid "$FR_PID"
	for kind in tw tv ts tn tc; do
		case $kind in
		tw) extra="" ;;
		ts) extra="--rx-coalesce-us 500" ;;
		tv) extra="--volatile-identities" ;;
		tn) extra=$NOPRIV ;;
		tc) extra="$NOPRIV --rx-coalesce-us 0" ;;
		esac
		port=$(free_port) || exit 1
		# shellcheck disable=SC2086
		start_twagd "$tmp/sim.db" "$port" "$tmp/twagd-sim-$kind.log" --threads 2 \
			--sim-fullauth-id-req $extra || exit 1
		res[$kind,$round]=$(run_radeap "$TWAGD_PID" "$port")
		stop_pid "$TWAGD_PID"
	done
done

echo "== (b) EAP-AKA': twagd under twag-load" >&2
"$LOAD" --gen "$N_AKA_SUBS" --gen-csv "$tmp/aka.csv" --gen-algo milenage >/dev/null || exit 1
"$TWAG" subscriber import --db "$tmp/aka.db" --csv "$tmp/aka.csv" >/dev/null || exit 1
aka_rows=""
declare -A best_rate best_cpu
best_rate[on]=0 best_rate[off]=0 best_rate[vol]=0 best_cpu[on]="" best_cpu[off]="" best_cpu[vol]=""
# twagd threads / twag-load threads / concurrency / identity privacy: the
# machine has few cores, so both sides share them; a few settings, the
# best rate of each configuration goes into the targets table
# (the last two: twag-load sending each request on its own, as a NAS does,
# instead of in UDP GSO groups that reach twagd coalesced by UDP GRO)
for setting in "1 1 256 on" "2 1 512 on" "2 2 1024 on" "1 1 256 vol" "1 1 256 off" "2 1 512 off" \
	"1 1 256 on nogso" "1 1 256 off nogso"; do
	read -r st lt conc priv nogso <<<"$setting"
	extra=""
	lextra=""
	[ "$priv" = off ] && extra=$NOPRIV
	[ "$priv" = vol ] && extra="--volatile-identities"
	[ "$nogso" = nogso ] && lextra="--no-udp-gso"
	port=$(free_port) || exit 1
	# shellcheck disable=SC2086
	start_twagd "$tmp/aka.db" "$port" "$tmp/twagd-aka.log" --threads "$st" $extra || exit 1
	# warm-up: every subscriber's first attach since twagd started (its
	# record loaded, its SQN block reserved): measured too
	# shellcheck disable=SC2086
	wout=$("$LOAD" --server "127.0.0.1:$port" --secret "$SECRET" --method aka-prime \
		--subscribers "$tmp/aka.csv" --usim-state "$tmp/usim.state" --attaches "$N_AKA_SUBS" \
		--concurrency "$conc" --threads "$lt" --server-pid "$TWAGD_PID" $lextra)
	wval() { printf '%s\n' "$wout" | sed -nE "s/^$1=(.*)/\1/p"; }
	# shellcheck disable=SC2086
	out=$("$LOAD" --server "127.0.0.1:$port" --secret "$SECRET" --method aka-prime \
		--subscribers "$tmp/aka.csv" --usim-state "$tmp/usim.state" --time "$LOAD_TIME" \
		--concurrency "$conc" --threads "$lt" --server-pid "$TWAGD_PID" $lextra)
	stop_pid "$TWAGD_PID"
	val() { printf '%s\n' "$out" | sed -nE "s/^$1=(.*)/\1/p"; }
	rate=$(val attaches_per_s)
	aka_rows+="| $priv | $([ "$nogso" = nogso ] && echo "one by one" || echo "GSO groups") | $st | $lt | $conc | $(val ok) | $(val failed) | $rate | $(val latency_p50_us) | $(val latency_p99_us) | $(val latency_max_us) | $(val server_cpu_us_per_attach) | $(val client_cpu_us_per_attach) | $(wval attaches_per_s) | $(wval server_cpu_us_per_attach) |"$'\n'
	if [ "$(val failed)" = 0 ] && [ "$(calc "${rate:-0} > ${best_rate[$priv]}")" = 1 ]; then
		best_rate[$priv]=$rate
		best_cpu[$priv]=$(val server_cpu_us_per_attach)
	fi
done

# ---- report ---------------------------------------------------------------
us() { # cpu_s accepted -> µs per auth
	if [ "${2:-0}" -gt 0 ]; then calcf %.1f "$1 * 1000000 / $2"; else echo "n/a"; fi
}
rate_of() { if [ "${1:-0}" -gt 0 ]; then calcf %.0f "$1 / $2"; else echo 0; fi; }
ratio_of() {
	if [ "$1" != n/a ] && [ "$2" != n/a ] && [ "$(calc "$2 > 0")" = 1 ]; then
		calcf %.1f "$1 / $2"
	else
		echo n/a
	fi
}
# per round: µs/auth of each row, and FreeRADIUS / twagd of the round
round_us() { # kind round
	local acc cpu
	read -r acc _ _ cpu _ <<<"${res[$1,$2]}"
	us "$cpu" "$acc"
}
median() { # values... (n/a sorts last; the middle one)
	printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }'
}
# the round whose µs/auth is the median of the row's: its whole record
median_round() { # kind
	local r best="" m
	# shellcheck disable=SC2046 # one value per round
	# shellcheck disable=SC2005 # echo adds the newline calcf leaves out
	m=$(median $(for ((r = 1; r <= ROUNDS; r++)); do echo "$(round_us "$1" "$r")"; done))
	for ((r = 1; r <= ROUNDS; r++)); do
		[ "$(round_us "$1" "$r")" = "$m" ] && { best=$r; break; }
	done
	echo "$best"
}
per_round() { # kind -> "a / b / c"
	local r out=""
	for ((r = 1; r <= ROUNDS; r++)); do out+="${out:+ / }$(round_us "$1" "$r")"; done
	echo "$out"
}
round_ratios() { # kind -> the FreeRADIUS / twagd ratio of each round
	local r
	for ((r = 1; r <= ROUNDS; r++)); do
		# shellcheck disable=SC2005 # echo adds the newline calcf leaves out
		echo "$(ratio_of "$(round_us fr "$r")" "$(round_us "$1" "$r")")"
	done
}
med_us() { round_us "$1" "$(median_round "$1")"; } # kind -> its median µs/auth
tw_us=$(med_us tw)
tn_us=$(med_us tn)
tv_us=$(med_us tv)
# shellcheck disable=SC2046 # one ratio per round
ratio=$(median $(round_ratios tw))
# shellcheck disable=SC2046
ratio_n=$(median $(round_ratios tn))
# shellcheck disable=SC2046
ratio_v=$(median $(round_ratios tv))
met() { [ "$1" = 1 ] && echo "**met**" || echo "**not met**"; }
cmpnum() { [ "$2" = n/a ] || [ -z "$2" ] && { echo 0; return; }; calc "$2 $1 $3"; }

commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
cpu_model=$(lscpu 2>/dev/null | sed -nE 's/^Model name: *//p' | head -1)
machine="$(nproc) CPUs ($cpu_model), $(uname -sr), $(awk '/MemTotal/ {printf "%.1f GiB", $2/1048576}' /proc/meminfo)"
row() { # label kind: the kind's median round, and its figure in every round
	local acc den wall cpu ucpu
	read -r acc den wall cpu ucpu <<<"${res[$2,$(median_round "$2")]}"
	printf '| %s | %s | %s | %s | %.2f | %s | %.2f | %s | %s | %s | %s |\n' "$1" "$acc" "$den" \
		"$((N_AUTH - acc - den))" "$wall" "$(rate_of "$acc" "$wall")" "$cpu" "$(us "$cpu" "$acc")" \
		"$(us "$ucpu" "$acc")" "$(us "$(calc "$cpu - $ucpu")" "$acc")" "$(per_round "$2")"
}

{
	echo "# Gateway benchmark"
	echo
	echo "Produced by \`bench/gateway.sh\` (\`make bench-gateway\`). Server CPU time is the"
	echo "delta of utime+stime of the server process (/proc/PID/stat, $CLK_TCK ticks/s)"
	echo "over the run, divided by the authentications it accepted. Neither server"
	echo "logs each authentication (FreeRADIUS \`auth = no\`, twagd \`--log-level warn\`)."
	echo "\"identity privacy\" is twagd's default: every full authentication mints a"
	echo "pseudonym and a fast re-authentication id (AT_NEXT_PSEUDONYM,"
	echo "AT_NEXT_REAUTH_ID) and the store keeps them (written behind to SQLite;"
	echo "with \`--volatile-identities\` pseudonyms resolve by decryption and re-auth"
	echo "contexts stay in memory, no database write); \"off\" is"
	echo "\`$NOPRIV\` (FreeRADIUS's EAP-SIM issues neither)."
	echo
	echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "- commit: $commit"
	echo "- machine: $machine"
	echo
	echo "## (a) Full EAP-SIM authentications, radeapclient -p 64, same input file"
	echo
	echo "$N_AUTH authentications over $N_SUBS COMP128-1 subscribers (users file for"
	echo "FreeRADIUS, \`twag subscriber import\` for twagd; twagd --threads 2"
	echo "--sim-fullauth-id-req, FreeRADIUS with 2 worker threads)."
	echo
	echo "Each server first answers $N_WARM authentications of the same file that are"
	echo "not counted (its tables and caches reach their steady state)."
	echo "$ROUNDS rounds, each running the six rows one after the other; a row shows"
	echo "its median round (by server CPU per authentication), and the last column"
	echo "that figure in every round, in order."
	echo
	echo "| server | accepted | denied | no answer | wall s | auths/s | server CPU s | server CPU µs/auth | of which user µs | of which kernel µs | µs/auth by round |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"
	row "FreeRADIUS $fr_version" fr
	row "twagd (identity privacy on)" tw
	row "twagd (identity privacy on, --volatile-identities)" tv
	row "twagd (identity privacy on, --rx-coalesce-us 500)" ts
	row "twagd (identity privacy off)" tn
	row "twagd (identity privacy off, --rx-coalesce-us 0)" tc
	echo
	echo "User and kernel split the server CPU by utime and stime: the kernel's part is"
	echo "the system calls, mostly UDP over loopback (each reply's send also runs its"
	echo "delivery to radeapclient's socket), and the wake-ups. twagd's default receive"
	echo "coalescing (\`--rx-coalesce-us 1000\`) takes radeapclient's stream several"
	echo "datagrams per receive, with at most one wait (a sleep and a wake-up) per"
	echo "1000 µs; the row with 500 shows the cost of twice as many waits, and the"
	echo "last row turns it off, so that each datagram costs a wake-up and its own"
	echo "receive and send."
	echo
	echo "FreeRADIUS / twagd server CPU per authentication, the median of the rounds'"
	echo "ratios: ${ratio}x (privacy on; by round $(round_ratios tw | paste -sd/ | sed 's|/| / |g')),"
	echo "${ratio_v}x (privacy on, --volatile-identities; by round $(round_ratios tv | paste -sd/ | sed 's|/| / |g')),"
	echo "${ratio_n}x (privacy off; by round $(round_ratios tn | paste -sd/ | sed 's|/| / |g')). The wall time"
	echo "is radeapclient's (a single-threaded client), not the servers' limit."
	echo
	echo "## (b) Full EAP-AKA' attaches under twag-load"
	echo
	echo "$N_AKA_SUBS Milenage subscribers, ${LOAD_TIME} s per setting after a warm-up pass"
	echo "(every subscriber's first attach: loaded, SQN block reserved); twag-load on the"
	echo "same machine."
	echo
	echo "twag-load sends the requests a socket has queued that have one length as"
	echo "one UDP GSO send (its default), which on loopback reach twagd as one"
	echo "receive (UDP GRO); the rows \"one by one\" (\`twag-load --no-udp-gso\`) send"
	echo "each request on its own, as a NAS does. The targets below take the best"
	echo "rate of each privacy setting over all rows (\"vol\": privacy on with"
	echo "\`--volatile-identities\`)."
	echo
	echo "The last two columns are the warm-up pass: each subscriber's first attach"
	echo "since twagd started, which waits for its SQN block to be made durable"
	echo "(the first vectors of a receive batch share one commit)."
	echo
	echo "| identity privacy | twag-load sends | twagd threads | twag-load threads | concurrency | ok | failed | attaches/s | p50 µs | p99 µs | max µs | server CPU µs/attach | client CPU µs/attach | first attaches/s | their server CPU µs |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
	printf '%s' "$aka_rows"
	echo
	echo "## Targets (2-core machine)"
	echo
	echo "| target | twagd default (privacy on) | | privacy on, --volatile-identities | | privacy off | |"
	echo "|---|---|---|---|---|---|---|"
	echo "| ≤ 16 µs server CPU per full EAP-SIM auth | $tw_us µs | $(met "$(cmpnum '<=' "$tw_us" 16)") | $tv_us µs | $(met "$(cmpnum '<=' "$tv_us" 16)") | $tn_us µs | $(met "$(cmpnum '<=' "$tn_us" 16)") |"
	echo "| ≤ 16 µs server CPU per full EAP-AKA' attach (at the best rate) | ${best_cpu[on]} µs | $(met "$(cmpnum '<=' "${best_cpu[on]}" 16)") | ${best_cpu[vol]} µs | $(met "$(cmpnum '<=' "${best_cpu[vol]}" 16)") | ${best_cpu[off]} µs | $(met "$(cmpnum '<=' "${best_cpu[off]}" 16)") |"
	echo "| ≥ 10x less server CPU than FreeRADIUS (EAP-SIM) | ${ratio}x | $(met "$(cmpnum '>=' "$ratio" 10)") | ${ratio_v}x | $(met "$(cmpnum '>=' "$ratio_v" 10)") | ${ratio_n}x | $(met "$(cmpnum '>=' "$ratio_n" 10)") |"
	echo "| ≥ 50,000 full EAP-AKA' attaches/s end to end | ${best_rate[on]}/s | $(met "$(cmpnum '>=' "${best_rate[on]}" 50000)") | ${best_rate[vol]}/s | $(met "$(cmpnum '>=' "${best_rate[vol]}" 50000)") | ${best_rate[off]}/s | $(met "$(cmpnum '>=' "${best_rate[off]}" 50000)") |"
} >"$tmp/GATEWAY.md"
cp "$tmp/GATEWAY.md" "$OUT"
cat "$OUT"
