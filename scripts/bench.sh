#!/usr/bin/env bash
# Regenerates bench/RESULTS.md from one default run of twag-bench.
#   scripts/bench.sh [BUILD_DIR [twag-bench arguments...]]
# BUILD_DIR defaults to "build"; with no arguments the run is exactly what
# `make bench` prints (every twag scenario beside its references).
# BENCH_BIN=path uses an already built twag-bench instead of making one.
# The charts go to bench/results.svg (+ bench/results-dataplane.svg).
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
scripts/deps.sh bench
bin=${BENCH_BIN:-$build/twag-bench}
[ -n "${BENCH_BIN:-}" ] || make --no-print-directory BUILD="$build" "$build/twag-bench" >&2
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s)
# stderr (progress, notes) shown as it comes and kept for the notes below
set -o pipefail
"$bin" --plot bench/results.svg "$@" 2>&1 >"$out" | tee "$err" >&2
secs=$(($(date +%s) - start))
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
{
	echo "# twag-bench: latest results"
	echo
	echo "Date: $(date -u +%Y-%m-%d) (UTC). Command: \`twag-bench${*:+ $*}\`" \
		"(the \`make bench\` default), wall time ${secs} s."
	echo "Commit, machine and CPU paths are on the first line of the table below."
	echo "Machine load (1/5/15-min load average) before the run: ${load_before};" \
		"after: ${load_after}. ops/CPU-s stays honest under load; ops/s and"
	echo "latencies do not. The twag / ref column is measured apart from the rows:"
	echo "ours and the reference alternate in short slices in one thread (median"
	echo "ratio of the pairs), so clock drift between rows does not enter it."
	echo "Column meanings and method: [README.md](README.md)." \
		"Charts: [results.svg](results.svg) (and results-dataplane.svg when data-plane rows ran)."
	echo
	cat "$out"
	echo
	if grep -q 'write-behind thread' "$err"; then
		echo "The identity rows' write-behind thread, not in the ident-store rows"
		echo "(its CPU per op from /proc, printed by twag-bench on stderr):"
		echo
		grep 'write-behind thread' "$err" | sed 's/^/- /'
		echo
	fi
	echo "Regenerate with one command: \`scripts/bench.sh\` (writes this file);"
	echo "\`make bench\` prints the same table without saving it."
} >bench/RESULTS.md
echo "scripts/bench.sh: wrote bench/RESULTS.md (${secs} s)" >&2
