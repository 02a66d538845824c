#!/usr/bin/env bash
# Installs the Debian packages twag needs, only those missing (idempotent).
#   scripts/deps.sh build   compiler side: OpenSSL headers, pkg-config
#   scripts/deps.sh test    + libosmocore (independent oracle), osmo-auc-gen,
#                           Python cryptography (independent cross-checks),
#                           groff and systemd-analyze (man pages, unit)
#   scripts/deps.sh bench   + gnuplot for --plot; bench/tunnel.sh's peers:
#                           iperf3, OpenVPN, wireguard-go and wg, ping
set -eu
what=${1:-test}
pkgs="build-essential libssl-dev pkg-config libsqlite3-dev"
case "$what" in
build) ;;
test) pkgs="$pkgs eapoltest freeradius-utils radsecproxy tshark ethtool iputils-ping sqlite3 libosmocore-dev libosmocore-utils python3 python3-cryptography valgrind clang libclang-rt-14-dev"
	# test_install.sh: groff renders the man pages, systemd-analyze checks the unit
	pkgs="$pkgs groff-base systemd" ;;
bench) pkgs="$pkgs freeradius freeradius-utils libosmocore-dev libosmocore-utils gnuplot-nox"
	pkgs="$pkgs iperf3 openvpn wireguard-go wireguard-tools iputils-ping openssl" ;;
*) echo "deps.sh: unknown set '$what' (build|test|bench)" >&2; exit 2 ;;
esac

missing=""
for p in $pkgs; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
		missing="$missing $p"
	fi
done
[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	echo "deps.sh: missing Debian packages:$missing (run as root, or: sudo apt-get install$missing)" >&2
	exit 1
fi
echo "deps.sh: installing$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
