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
	line=$(grep -oE '[0-9]+ passed, [0-9]+ failed' <<<"$line" | tail -n 1)
	p=${line%% passed*}
	f=${line#*passed, }
	f=${f%% failed*}
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
		# the random seed only when something failed (to run it again)
		if [ "$rc" -ne 0 ] || printf '%s\n' "$out" | grep -qE '^FAIL'; then
			printf '%s\n' "$out" | grep -E 'FAIL|passed|note:|vector ' || true
		else
			printf '%s\n' "$out" | grep -vE '^note: .*TWAG_TEST_SEED' | grep -E 'FAIL|passed|note:|vector ' || true
		fi
		tally "$out" "$rc" "$(basename "$t") [$lvl]"
	done
done

# Constant-time check under valgrind (not with sanitizers: they do not mix).
if [ -z "${TWAG_SANITIZER:-}" ] && [ -x "$build/tests/ct_check" ] && command -v valgrind >/dev/null 2>&1; then
	out=$(TWAG_CPU=avx2 timeout 600 valgrind -q "$build/tests/ct_check" 2>/dev/null)
	rc=$?
	printf '%s\n' "$out" | grep -E 'FAIL|passed' || true
	tally "$out" "$rc" "ct_check (valgrind)"
fi

# Fuzz targets as plain readers of their committed seed corpora.
for f in "$build"/fuzz/fuzz_*; do
	[ -x "$f" ] || continue
	name=${f##*/fuzz_}
	out=$(timeout 300 "$f" "tests/fuzz/corpus/$name" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -E 'FAIL|passed' || true
	tally "$out" "$rc" "fuzz_$name (corpus)"
done

# libFuzzer, briefly, where clang can build it (TWAG_FUZZ=0 skips).
if [ "${TWAG_FUZZ:-1}" != 0 ] && command -v clang >/dev/null 2>&1; then
	out=$(timeout 600 make --no-print-directory fuzz FUZZ_DIR="${build}-fuzz" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -E '^fuzz |DONE|ERROR|SUMMARY' || true
	if [ "$rc" -eq 0 ]; then
		n=$(printf '%s\n' "$out" | grep -c '^fuzz ')
		out="libfuzzer: $n passed, 0 failed"
	else
		printf '%s\n' "$out" | tail -30
		out="libfuzzer: 0 passed, 1 failed"
	fi
	tally "$out" "$rc" "libFuzzer"
fi

# Every benchmark scenario once, briefly (64 operations a row, one
# payload size): its setup runs, its cross-checks against the reference
# implementations agree, and no row errs (twag-bench exits 1 otherwise).
# The figures themselves are not looked at here.
if [ -x "$build/twag-bench" ]; then
	out=$(timeout 600 "$build/twag-bench" --requests 64 --warmup 0 --size-time 0.001 \
		--sizes 128 --checks 16 --quiet --csv 2>"$build/bench-smoke.err")
	rc=$?
	rows=$(printf '%s\n' "$out" | grep -cvE '^(#|scenario,|$)')
	if [ "$rc" -eq 0 ] && [ "$rows" -gt 0 ]; then
		echo "twag-bench smoke: $rows passed, 0 failed"
		tally "twag-bench smoke: $rows passed, 0 failed" 0 "twag-bench smoke"
	else
		cat "$build/bench-smoke.err"
		echo "FAIL twag-bench smoke: exit $rc, $rows rows"
		tally "twag-bench smoke: 0 passed, 1 failed" 1 "twag-bench smoke"
	fi
fi

for s in tests/cli/*.sh; do
	[ -f "$s" ] || continue
	out=$(TWAG="$build/twag" timeout 300 bash "$s" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -E 'FAIL|passed|note:' || true
	tally "$out" "$rc" "$(basename "$s")"
done

# Integration tests: the real daemon on 127.0.0.1 driven by real
# third-party peers (eapol_test, radeapclient, tshark, Python sockets).
for s in tests/integration/test_*.sh; do
	[ -f "$s" ] || continue
	out=$(BUILD="$build" timeout 900 bash "$s" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -E 'FAIL|passed|note:' || true
	tally "$out" "$rc" "$(basename "$s")"
done

fail=$((fail + broken))
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
