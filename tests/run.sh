#!/usr/bin/env bash
# Runs every unit test program once per CPU level the machine offers, then
# the CLI tests, and ends with one line "N passed, N failed".
set -u
build=${1:-build}
cd "$(dirname "$0")/.." || exit 2
pass=0
fail=0
broken=0

tally() { # $1 = output of one program, $2 = its exit status, $3 = label
	local line p f
	line=$(printf '%s\n' "$1" | grep -E '[0-9]+ passed, [0-9]+ failed' | tail -n 1)
	if [ -z "$line" ]; then
		echo "FAIL $3: no result line (exit $2)"
		broken=$((broken + 1))
		return
	fi
	p=$(sed -E 's/.* ([0-9]+) passed, ([0-9]+) failed.*/\1/' <<<"$line")
	f=$(sed -E 's/.* ([0-9]+) passed, ([0-9]+) failed.*/\2/' <<<"$line")
	pass=$((pass + p))
	fail=$((fail + f))
	if [ "$2" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL $3: exit status $2"
		broken=$((broken + 1))
	fi
}

levels=$("$build/tests/cpu_levels")
for t in "$build"/tests/test_*; do
	[ -x "$t" ] || continue
	for lvl in $levels; do
		out=$(TWAG_CPU=$lvl timeout 300 "$t" 2>&1)
		rc=$?
		printf '%s\n' "$out" | grep -vE '^note: .*TWAG_TEST_SEED' | grep -E 'FAIL|passed|note:|vector ' || true
		tally "$out" "$rc" "$(basename "$t") [$lvl]"
	done
done

for s in tests/cli/*.sh; do
	[ -f "$s" ] || continue
	out=$(TWAG="$build/twag" timeout 300 bash "$s" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -E 'FAIL|passed|note:' || true
	tally "$out" "$rc" "$(basename "$s")"
done

fail=$((fail + broken))
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
