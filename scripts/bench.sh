#!/usr/bin/env bash
# Regenerates bench/RESULTS.md from one default run of twag-bench.
#   scripts/bench.sh [BUILD_DIR [twag-bench arguments...]]
# BUILD_DIR defaults to "build"; with no arguments the run is exactly what
# `make bench` prints (every twag scenario beside its references).
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
[ $# -gt 0 ] && shift
scripts/deps.sh bench
make --no-print-directory BUILD="$build" "$build/twag-bench" >&2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s)
"$build/twag-bench" "$@" >"$out"
secs=$(($(date +%s) - start))
{
	echo "# twag-bench: latest results"
	echo
	echo "Date: $(date -u +%Y-%m-%d) (UTC). Command: \`twag-bench${*:+ $*}\`" \
		"(the \`make bench\` default), wall time ${secs} s."
	echo "Commit, machine and CPU paths are on the first line of the table below."
	echo "Column meanings and method: [README.md](README.md)."
	echo
	cat "$out"
	echo
	echo "Regenerate with one command: \`scripts/bench.sh\` (writes this file);"
	echo "\`make bench\` prints the same table without saving it."
} >bench/RESULTS.md
echo "scripts/bench.sh: wrote bench/RESULTS.md (${secs} s)" >&2
