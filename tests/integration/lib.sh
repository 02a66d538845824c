# tests/integration/lib.sh — what the shell integration tests share; sourced
# after `cd` to the top of the tree:
#   lib_begin NAME TMP-PREFIX [DETAIL-LINES]
# sets root, BUILD (absolute), TWAG, TWAGD, LOAD, pass, fail and tmp (a new
# temp dir), and traps EXIT to stop every child of the script and remove
# tmp (kept with TWAG_TEST_KEEP=1). A script may define cleanup_more(),
# run once the children are gone. Then: ok WHAT, no WHAT [FILE] (FILE's last lines shown),
# finish (the "N passed, N failed" line; exit status), val NAME FILE (the
# last NAME=value of FILE), free_port (a TCP/UDP port no one uses on
# 127.0.0.1 in 20000-40000).

lib_begin() {
	LIB_NAME=$1
	LIB_DETAIL=${3:-30}
	root=$PWD
	BUILD=${BUILD:-build}
	case $BUILD in /*) ;; *) BUILD=$root/$BUILD ;; esac
	TWAG=$BUILD/twag
	TWAGD=$BUILD/twagd
	LOAD=$BUILD/twag-load
	pass=0
	fail=0
	tmp=$(mktemp -d "/tmp/$2.XXXXXX")
	trap lib_cleanup EXIT
	trap 'exit 130' INT TERM
}

# Only our own children still running (the shell's job table: a pid that
# was already waited for may belong to someone else by now).
lib_cleanup() {
	local p
	for p in $(jobs -p); do kill -9 "$p" 2>/dev/null; done
	for p in $(jobs -p); do wait "$p" 2>/dev/null; done
	if declare -F cleanup_more >/dev/null; then cleanup_more; fi
	if [ -n "${TWAG_TEST_KEEP:-}" ]; then
		echo "note: $LIB_NAME: kept $tmp"
	else
		rm -rf "$tmp"
	fi
}

ok() { pass=$((pass + 1)); [ -n "${TWAG_TEST_VERBOSE:-}" ] && echo "ok   $LIB_NAME: $1"; return 0; }
no() {
	fail=$((fail + 1))
	echo "FAIL $LIB_NAME: $1"
	[ -n "${2:-}" ] && [ -f "$2" ] && sed 's/^/     | /' "$2" | tail -"$LIB_DETAIL"
	return 0
}
finish() {
	echo "$pass passed, $fail failed"
	[ "$fail" -eq 0 ] && [ "$pass" -gt 0 ]
	exit $?
}
val() { sed -nE "s/^$1=(.*)/\1/p" "$2" | tail -1; } # val NAME FILE

free_port() {
	local p i
	for i in $(seq 1 50); do
		p=$((20000 + RANDOM % 20000))
		ss -Han "sport = :$p" 2>/dev/null | grep -q . || { echo "$p"; return 0; }
	done
	return 1
}
