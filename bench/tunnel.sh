#!/usr/bin/env bash
# bench/tunnel.sh [BUILD] [options] — the tunnel sizing study, on this machine.
#
# Two network namespaces joined by a veth pair (MTU 1500, 10.231.0.1/30 and
# 10.231.0.2/30); in each row a tunnel between them (or none: `veth`), an
# iperf3 server in B and a client in A sending over the tunnel's inner
# addresses (10.232.0.1 -> 10.232.0.2), TCP, one stream, `-l SIZE` for each
# send size. For every point the whole machine's CPU is read from /proc/stat
# (all CPUs, everything but idle and iowait) just before and just after the
# client runs, and the bytes delivered from iperf3's -J output (the
# receiver's count). Service demand = busy CPU µs / KB delivered (1 KB =
# 1024 B); utilisation = busy / total over all cores. iperf3's own CPU
# figures cover its own process only: kept in tunnel.json/csv as an aside.
#
# Rows (run one after another, each set up, pinged once, measured, torn down):
#   veth                       no tunnel (baseline)
#   openvpn-aes256gcm          OpenVPN 2.6, TLS mode, UDP, userspace TUN, no DCO
#   openvpn-aes128cbc-sha1     the same, AES-128-CBC + HMAC-SHA1 data channel
#   wireguard-go               wireguard-go + wg, userspace TUN
#   twag-XFORM                 twag-tunnel ($BUILD/twag-tunnel), one per transform
#   kernel-esp-aes-gcm-128     XFRM tunnel mode, where the kernel has ESP
#   kernel-wireguard           the kernel module, where the kernel has it
#
# Options:
#   --rows LIST   comma list of row names or globs (default: every row)
#   --sizes LIST  send sizes, comma or space separated
#                 (default 128,256,512,1024,1500,2048,4096,8192,16384,32768)
#   --time S      seconds per point (default 5)
#   --encap E     udp (default) or ip: the encapsulation of the twag ESP rows
#                 (the AH rows always use ip)
#   --twag-args A extra arguments for both twag-tunnel ends, e.g. '--threads 2'
#   --out DIR     results (default bench/results/tunnel-DATE)
#   --quick       sizes 1024,16384, 2 s per point
#
# Writes DIR/tunnel.md, tunnel.json, tunnel.csv, demand.svg, throughput.svg,
# the iperf3 -J output of every point (raw/), the tunnel logs (logs/) and
# the report's inputs (meta.tsv, rows.tsv, points.tsv).
# Everything started here is stopped here, the namespaces are removed, on
# any exit (trap). Must run as root.
set -u
build=${1:-build}
case "$build" in -*) build=build ;; *) shift || true ;; esac
cd "$(dirname "$0")/.." || exit 2
root=$PWD
TUNNEL=$root/$build/twag-tunnel

ALL_ROWS="veth openvpn-aes256gcm openvpn-aes128cbc-sha1 wireguard-go
twag-null twag-aes-gcm-128 twag-aes-gcm-256 twag-aes-cbc-128-hmac-sha1
twag-aes-cbc-128-hmac-sha256 twag-aes-cbc-128-hmac-md5 twag-3des-cbc-hmac-sha1
twag-null-hmac-sha1 twag-ah-hmac-sha1 twag-ah-hmac-md5
kernel-esp-aes-gcm-128 kernel-wireguard"
rows_sel="*"
sizes="128 256 512 1024 1500 2048 4096 8192 16384 32768"
T=5
encap=udp
twag_args=""
out=""

usage() { sed -n '2,/^set -u/p' "$0" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//' >&2; exit 2; }
while [ $# -gt 0 ]; do
	case "$1" in
	--rows) rows_sel=${2:?}; shift 2 ;;
	--sizes) sizes=$(printf '%s' "${2:?}" | tr ',' ' '); shift 2 ;;
	--time) T=${2:?}; shift 2 ;;
	--encap) encap=${2:?}; shift 2 ;;
	--twag-args) twag_args=${2:?}; shift 2 ;;
	--out) out=${2:?}; shift 2 ;;
	--quick) sizes="1024 16384"; T=2; shift ;;
	-h | --help) usage ;;
	*) echo "tunnel.sh: unknown option '$1'" >&2; usage ;;
	esac
done
case "$T" in '' | *[!0-9]*) echo "tunnel.sh: --time wants whole seconds" >&2; exit 2 ;; esac
case "$encap" in udp | ip) ;; *) echo "tunnel.sh: --encap udp|ip" >&2; exit 2 ;; esac
for s in $sizes; do
	case "$s" in '' | *[!0-9]*) echo "tunnel.sh: bad size '$s'" >&2; exit 2 ;; esac
done
if [ "$(id -u)" -ne 0 ]; then
	echo "tunnel.sh: must run as root (network namespaces, TUN devices)" >&2
	exit 2
fi
for c in ip iperf3 ping timeout python3 od; do
	command -v "$c" >/dev/null || { echo "tunnel.sh: $c missing (scripts/deps.sh bench)" >&2; exit 2; }
done

# the selected rows, in the fixed order of ALL_ROWS
rows=""
for r in $ALL_ROWS; do
	IFS=, read -r -a pats <<<"$rows_sel"
	for p in "${pats[@]}"; do
		p=${p// /}
		# shellcheck disable=SC2053 # $p is a glob on purpose
		if [[ $r == $p ]]; then rows="$rows $r"; break; fi
	done
done
[ -n "$rows" ] || { echo "tunnel.sh: --rows '$rows_sel' selects no row (rows: $(printf '%s' "$ALL_ROWS" | tr '\n' ' '))" >&2; exit 2; }

[ -n "$out" ] || out=bench/results/tunnel-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "$out/raw" "$out/logs" || exit 2
out=$(cd "$out" && pwd)

tag=$$
NSA=twb-a-$tag
NSB=twb-b-$tag
VA=twbva$tag # veth ends (IFNAMSIZ: at most 15 characters)
VB=twbvb$tag
OUTER_A=10.231.0.1
OUTER_B=10.231.0.2
INNER_A=10.232.0.1
INNER_B=10.232.0.2
IPERF_PORT=5201
CLK_TCK=$(getconf CLK_TCK)
tmp=$(mktemp -d /tmp/twag-tunbench.XXXXXX)
pids=""        # every process started here (pids, killed by id on exit)
wg_socks=""    # wireguard-go UAPI sockets (the file system is not per namespace)

log() { echo "tunnel.sh: $*" >&2; }
ina() { ip netns exec "$NSA" "$@"; }
inb() { ip netns exec "$NSB" "$@"; }

# stop_pids PID...: SIGTERM, up to 3 s, then SIGKILL
stop_pids() {
	local p alive
	[ $# -gt 0 ] || return 0
	for p in "$@"; do kill -TERM "$p" 2>/dev/null; done
	for _ in $(seq 1 30); do
		alive=0
		for p in "$@"; do kill -0 "$p" 2>/dev/null && alive=1; done
		[ $alive -eq 0 ] && break
		sleep 0.1
	done
	for p in "$@"; do
		if kill -0 "$p" 2>/dev/null; then
			log "pid $p did not stop on SIGTERM: SIGKILL"
			kill -KILL "$p" 2>/dev/null
		fi
	done
	for p in "$@"; do wait "$p" 2>/dev/null; done
	return 0
}
# started PID: remember a process to stop at the end of its row or run
started() { pids="$pids $1"; }
stop_all() {
	local ns p
	# shellcheck disable=SC2086
	stop_pids $pids
	pids=""
	# anything else still living in our namespaces was started by us too
	for ns in "$NSA" "$NSB"; do
		ip netns list 2>/dev/null | grep -qw "$ns" || continue
		for p in $(ip netns pids "$ns" 2>/dev/null); do stop_pids "$p"; done
	done
}
cleanup() {
	local s
	trap - EXIT INT TERM
	stop_all
	ip netns del "$NSA" 2>/dev/null
	ip netns del "$NSB" 2>/dev/null
	ip netns del "twb-probe-$tag" 2>/dev/null
	for s in $wg_socks; do rm -f "$s"; done
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'log "interrupted"; exit 130' INT TERM

# wait_for SECONDS CMD...: until CMD succeeds (bounded)
wait_for() {
	local n=$(($1 * 10))
	shift
	while [ $n -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.1
		n=$((n - 1))
	done
	return 1
}
alive() { kill -0 "$1" 2>/dev/null; }
# log_has FILE PATTERN PID: PATTERN in FILE, or fail fast when PID died
log_has() {
	grep -q "$2" "$1" 2>/dev/null && return 0
	alive "$3" || return 0 # stop waiting; the caller sees the dead process
	return 1
}
randhex() { od -An -tx1 -N"$1" /dev/urandom | tr -d ' \n'; }

# /proc/stat's first line: "busy total" ticks of all CPUs together
# (user nice system idle iowait irq softirq steal; guest is inside user)
cpu_ticks() {
	awk '/^cpu / { b = $2 + $3 + $4 + $7 + $8 + $9; print b, b + $5 + $6; exit }' /proc/stat
}

# ---- the test bed -------------------------------------------------------------
setup_bed() {
	ip netns add "$NSA" && ip netns add "$NSB" || return 1
	ip link add "$VA" netns "$NSA" mtu 1500 type veth peer name "$VB" netns "$NSB" mtu 1500 || return 1
	ina ip link set lo up && inb ip link set lo up &&
		ina ip addr add "$OUTER_A/30" dev "$VA" && inb ip addr add "$OUTER_B/30" dev "$VB" &&
		ina ip link set "$VA" up && inb ip link set "$VB" up || return 1
	wait_for 5 ina ping -c 1 -W 1 "$OUTER_B"
}

# ---- rows: each setup_* brings the tunnel up (inner INNER_A <-> INNER_B),
# records its processes with `started` and sets row_note; 1 = failed ----------
row_note=""
iperf_dst=$INNER_B

setup_veth() {
	iperf_dst=$OUTER_B
	row_note="no tunnel"
}

ovpn_pki() { # a throwaway CA, a server and a client certificate (P-256)
	[ -f "$tmp/pki/ca.crt" ] && return 0
	mkdir -p "$tmp/pki" || return 1
	(
		cd "$tmp/pki" || exit 1
		ec="-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes"
		# shellcheck disable=SC2086
		openssl req -x509 $ec -keyout ca.key -out ca.crt -subj /CN=twb-ca -days 2 &&
			printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n' >srv.ext &&
			printf 'basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth\n' >cli.ext || exit 1
		for who in srv cli; do
			# shellcheck disable=SC2086
			openssl req $ec -keyout $who.key -out $who.csr -subj /CN=twb-$who &&
				openssl x509 -req -in $who.csr -CA ca.crt -CAkey ca.key -CAcreateserial \
					-days 2 -extfile $who.ext -out $who.crt || exit 1
		done
	) >"$tmp/pki.log" 2>&1 || { row_note="openssl could not make the certificates"; return 1; }
}

# setup_openvpn CIPHER AUTH: point to point, TLS mode (the static-key mode
# is deprecated in 2.6), UDP 1194 on the veth addresses; the data channel
# cipher is the only one in --data-ciphers on both ends, so negotiation can
# pick nothing else; the log then names what was initialised
setup_openvpn() {
	local cipher=$1 auth=$2 p s la lb
	command -v openvpn >/dev/null || { row_note="skipped: openvpn not installed"; return 1; }
	command -v openssl >/dev/null || { row_note="skipped: openssl not installed"; return 1; }
	ovpn_pki || return 1
	la=$out/logs/$cur_row-a.log
	lb=$out/logs/$cur_row-b.log
	set -- --dev-type tun --proto udp --port 1194 --disable-dco --allow-compression no \
		--data-ciphers "$cipher" --data-ciphers-fallback "$cipher" --auth "$auth" \
		--ca "$tmp/pki/ca.crt" --verb 3 --mute-replay-warnings
	inb openvpn "$@" --dev "ovb$tag" --local "$OUTER_B" --tls-server --dh none \
		--cert "$tmp/pki/srv.crt" --key "$tmp/pki/srv.key" --remote-cert-tls client \
		--ifconfig "$INNER_B" "$INNER_A" >"$lb" 2>&1 &
	s=$!
	started $s
	ina openvpn "$@" --dev "ova$tag" --local "$OUTER_A" --remote "$OUTER_B" --tls-client \
		--cert "$tmp/pki/cli.crt" --key "$tmp/pki/cli.key" --remote-cert-tls server \
		--ifconfig "$INNER_A" "$INNER_B" >"$la" 2>&1 &
	p=$!
	started $p
	if ! wait_for 30 log_has "$la" "Initialization Sequence Completed" $p ||
		! wait_for 10 log_has "$lb" "Initialization Sequence Completed" $s ||
		! alive $p || ! alive $s; then
		row_note="failed: OpenVPN did not come up ($(grep -hiE 'error|fatal|option' "$la" "$lb" | tail -1))"
		return 1
	fi
	# what both ends actually use, from their logs ("Data Channel: cipher
	# 'AES-128-CBC', auth 'SHA1', peer-id: 0")
	row_note=$(grep -h -m1 "Data Channel: cipher" "$la" | sed -E "s/^.*Data Channel: //; s/, peer-id.*//")
	if ! grep -q "Data Channel: cipher '$cipher'" "$la" || ! grep -q "Data Channel: cipher '$cipher'" "$lb"; then
		row_note="failed: not the data channel asked for ($row_note)"
		return 1
	fi
	row_note="OpenVPN $(openvpn --version | head -1 | awk '{print $2}'), UDP, TLS mode, no DCO: $row_note"
	return 0 # (not the status of the substitution above)
}

# wireguard-go in one namespace: NS NAME PRIVFILE PORT PEERPUB ENDPOINT ADDR PEERADDR
wg_up() {
	local ns=$1 dev=$2 priv=$3 port=$4 peer=$5 ep=$6 addr=$7 peeraddr=$8 lg=$9 pid
	ip netns exec "$ns" env WG_PROCESS_FOREGROUND=1 wireguard-go -f "$dev" >"$lg" 2>&1 &
	pid=$!
	started $pid
	wg_socks="$wg_socks /var/run/wireguard/$dev.sock"
	wait_for 10 test -S "/var/run/wireguard/$dev.sock" || return 1
	ip netns exec "$ns" wg set "$dev" private-key "$priv" listen-port "$port" \
		peer "$peer" allowed-ips "$peeraddr/32" endpoint "$ep" &&
		ip netns exec "$ns" ip addr add "$addr/24" dev "$dev" &&
		ip netns exec "$ns" ip link set "$dev" mtu 1420 up
}
wg_keys() {
	umask 077
	wg genkey >"$tmp/wga.key" && wg genkey >"$tmp/wgb.key" || return 1
	wg_pub_a=$(wg pubkey <"$tmp/wga.key") && wg_pub_b=$(wg pubkey <"$tmp/wgb.key")
}
setup_wireguard_go() {
	command -v wireguard-go >/dev/null || { row_note="skipped: wireguard-go not installed"; return 1; }
	command -v wg >/dev/null || { row_note="skipped: wg (wireguard-tools) not installed"; return 1; }
	wg_keys || { row_note="failed: wg genkey"; return 1; }
	if ! wg_up "$NSB" "wgb$tag" "$tmp/wgb.key" 51820 "$wg_pub_a" "$OUTER_A:51820" "$INNER_B" "$INNER_A" "$out/logs/$cur_row-b.log" ||
		! wg_up "$NSA" "wga$tag" "$tmp/wga.key" 51820 "$wg_pub_b" "$OUTER_B:51820" "$INNER_A" "$INNER_B" "$out/logs/$cur_row-a.log"; then
		row_note="failed: wireguard-go did not come up ($(tail -1 "$out/logs/$cur_row-a.log" 2>/dev/null))"
		return 1
	fi
	row_note="wireguard-go $(wireguard-go --version 2>/dev/null | head -1 | awk '{print $2}'), MTU 1420, ChaCha20-Poly1305"
	return 0
}

# key lengths (octets) of each twag-tunnel transform: encryption | authentication
twag_keylen() {
	case "$1" in
	aes-gcm-128) echo 20 ;; aes-gcm-256) echo 36 ;;
	aes-cbc-128-hmac-sha1) echo 36 ;; aes-cbc-256-hmac-sha1) echo 52 ;;
	aes-cbc-128-hmac-sha256) echo 48 ;; aes-cbc-256-hmac-sha256) echo 64 ;;
	aes-cbc-128-hmac-md5) echo 32 ;; 3des-cbc-hmac-sha1) echo 44 ;;
	null-hmac-sha1) echo 20 ;; null-hmac-md5) echo 16 ;; null) echo 0 ;;
	ah-hmac-sha1) echo 20 ;; ah-hmac-sha256) echo 32 ;; ah-hmac-md5) echo 16 ;;
	*) return 1 ;;
	esac
}
setup_twag() {
	local xf=$1 n e k1 k2 s1 s2 sa1 sa2 la lb p s extra=""
	[ -x "$TUNNEL" ] || { row_note="skipped: not built ($build/twag-tunnel missing)"; return 1; }
	n=$(twag_keylen "$xf") || { row_note="failed: unknown transform $xf"; return 1; }
	e=$encap
	case "$xf" in ah-*) e=ip ;; esac
	[ "$xf" = null ] && extra=--allow-null
	k1=$(randhex "$n")
	k2=$(randhex "$n")
	s1=$(printf '%08x' $((0x10000000 + RANDOM)))
	s2=$(printf '%08x' $((0x20000000 + RANDOM)))
	sa1="spi=$s1,xform=$xf" # A -> B
	sa2="spi=$s2,xform=$xf" # B -> A
	if [ "$n" -gt 0 ]; then sa1="$sa1,key=$k1"; sa2="$sa2,key=$k2"; fi
	la=$out/logs/$cur_row-a.log
	lb=$out/logs/$cur_row-b.log
	# shellcheck disable=SC2086
	inb "$TUNNEL" --tun "ttb$tag" --addr "$INNER_B/24" --local "$OUTER_B" --remote "$OUTER_A" \
		--encap "$e" --sa-out "$sa2" --sa-in "$sa1" $extra $twag_args >"$lb" 2>&1 &
	s=$!
	started $s
	# shellcheck disable=SC2086
	ina "$TUNNEL" --tun "tta$tag" --addr "$INNER_A/24" --local "$OUTER_A" --remote "$OUTER_B" \
		--encap "$e" --sa-out "$sa1" --sa-in "$sa2" $extra $twag_args >"$la" 2>&1 &
	p=$!
	started $p
	if ! wait_for 15 log_has "$la" "twag-tunnel: ready" $p || ! wait_for 15 log_has "$lb" "twag-tunnel: ready" $s ||
		! alive $p || ! alive $s; then
		row_note="failed: twag-tunnel did not come up ($(tail -1 "$la"; tail -1 "$lb"))"
		return 1
	fi
	row_note="twag-tunnel, $xf, encap $e, MTU $(ina cat "/sys/class/net/tta$tag/mtu" 2>/dev/null)${twag_args:+, $twag_args}"
	return 0
}

# ---- kernel rows: detected in a scratch namespace ------------------------------
kernel_esp_ok() {
	local ns=twb-probe-$tag r=1
	ip netns add "$ns" 2>/dev/null || return 1
	ip netns exec "$ns" ip xfrm state add src 10.0.0.1 dst 10.0.0.2 proto esp spi 0x100 mode tunnel \
		aead 'rfc4106(gcm(aes))' "0x$(randhex 20)" 128 >/dev/null 2>&1 && r=0
	ip netns del "$ns"
	return $r
}
kernel_wg_ok() {
	local ns=twb-probe-$tag r=1
	ip netns add "$ns" 2>/dev/null || return 1
	ip netns exec "$ns" ip link add wgprobe type wireguard >/dev/null 2>&1 && r=0
	ip netns del "$ns"
	return $r
}
# shellcheck disable=SC2015 # a && b || { note; return 1; }: any step failing fails the row
# kernel ESP, tunnel mode between the veth addresses, policies for the inner
# /32s (held on lo, reached over the veth)
setup_kernel_esp() {
	local ka kb sa sb
	sa=0x$(printf '%08x' $((0x30000000 + RANDOM)))
	sb=0x$(printf '%08x' $((0x40000000 + RANDOM)))
	kernel_esp_ok || { row_note="kernel ESP: not available (no XFRM ESP in this kernel)"; return 1; }
	ka=0x$(randhex 20)
	kb=0x$(randhex 20)
	for ns in "$NSA" "$NSB"; do
		ip netns exec "$ns" ip xfrm state add src "$OUTER_A" dst "$OUTER_B" proto esp spi "$sa" \
			reqid 1 mode tunnel aead 'rfc4106(gcm(aes))' "$ka" 128 &&
			ip netns exec "$ns" ip xfrm state add src "$OUTER_B" dst "$OUTER_A" proto esp spi "$sb" \
				reqid 2 mode tunnel aead 'rfc4106(gcm(aes))' "$kb" 128 || { row_note="failed: ip xfrm state"; return 1; }
	done
	ina ip addr add "$INNER_A/32" dev lo && inb ip addr add "$INNER_B/32" dev lo &&
		ina ip route add "$INNER_B/32" dev "$VA" src "$INNER_A" &&
		inb ip route add "$INNER_A/32" dev "$VB" src "$INNER_B" &&
		ina ip xfrm policy add src "$INNER_A/32" dst "$INNER_B/32" dir out \
			tmpl src "$OUTER_A" dst "$OUTER_B" proto esp reqid 1 mode tunnel &&
		ina ip xfrm policy add src "$INNER_B/32" dst "$INNER_A/32" dir in \
			tmpl src "$OUTER_B" dst "$OUTER_A" proto esp reqid 2 mode tunnel &&
		inb ip xfrm policy add src "$INNER_B/32" dst "$INNER_A/32" dir out \
			tmpl src "$OUTER_B" dst "$OUTER_A" proto esp reqid 2 mode tunnel &&
		inb ip xfrm policy add src "$INNER_A/32" dst "$INNER_B/32" dir in \
			tmpl src "$OUTER_A" dst "$OUTER_B" proto esp reqid 1 mode tunnel ||
		{ row_note="failed: ip xfrm policy / routes"; return 1; }
	row_note="kernel XFRM ESP, tunnel mode, rfc4106(gcm(aes)) 128"
}
teardown_kernel_esp() {
	local ns
	for ns in "$NSA" "$NSB"; do
		ip netns exec "$ns" ip xfrm policy flush
		ip netns exec "$ns" ip xfrm state flush
	done
	ina ip route del "$INNER_B/32" 2>/dev/null
	inb ip route del "$INNER_A/32" 2>/dev/null
	ina ip addr del "$INNER_A/32" dev lo 2>/dev/null
	inb ip addr del "$INNER_B/32" dev lo 2>/dev/null
	return 0
}
# shellcheck disable=SC2015
setup_kernel_wg() {
	kernel_wg_ok || { row_note="kernel WireGuard: not available (no wireguard module in this kernel)"; return 1; }
	command -v wg >/dev/null || { row_note="skipped: wg (wireguard-tools) not installed"; return 1; }
	wg_keys || { row_note="failed: wg genkey"; return 1; }
	inb ip link add "kwb$tag" type wireguard && ina ip link add "kwa$tag" type wireguard &&
		inb wg set "kwb$tag" private-key "$tmp/wgb.key" listen-port 51821 \
			peer "$wg_pub_a" allowed-ips "$INNER_A/32" endpoint "$OUTER_A:51821" &&
		ina wg set "kwa$tag" private-key "$tmp/wga.key" listen-port 51821 \
			peer "$wg_pub_b" allowed-ips "$INNER_B/32" endpoint "$OUTER_B:51821" &&
		inb ip addr add "$INNER_B/24" dev "kwb$tag" && ina ip addr add "$INNER_A/24" dev "kwa$tag" &&
		inb ip link set "kwb$tag" mtu 1420 up && ina ip link set "kwa$tag" mtu 1420 up ||
		{ row_note="failed: kernel WireGuard set-up"; return 1; }
	row_note="kernel WireGuard, MTU 1420"
}
teardown_kernel_wg() {
	ina ip link del "kwa$tag" 2>/dev/null
	inb ip link del "kwb$tag" 2>/dev/null
	return 0
}

# the status word of a row that was not measured, from its note
note_status() {
	case "$1" in
	skipped:*) echo skipped ;;
	*"not available"*) echo "not available" ;;
	*) echo failed ;;
	esac
}
setup_row() {
	row_note=""
	iperf_dst=$INNER_B
	case "$1" in
	veth) setup_veth ;;
	openvpn-aes256gcm) setup_openvpn AES-256-GCM SHA256 ;; # --auth: the TLS channel's only, GCM has its tag
	openvpn-aes128cbc-sha1) setup_openvpn AES-128-CBC SHA1 ;;
	wireguard-go) setup_wireguard_go ;;
	twag-*) setup_twag "${1#twag-}" ;;
	kernel-esp-aes-gcm-128) setup_kernel_esp ;;
	kernel-wireguard) setup_kernel_wg ;;
	*) row_note="failed: unknown row"; return 1 ;;
	esac
}
teardown_row() {
	stop_all
	case "$1" in
	kernel-esp-*) teardown_kernel_esp >/dev/null 2>&1 ;;
	kernel-wireguard) teardown_kernel_wg ;;
	esac
	# wireguard-go removes its socket on exit; make sure
	for s in $wg_socks; do rm -f "$s"; done
	wg_socks=""
	return 0
}

# ---- one point: SIZE; appends to points.tsv ------------------------------------
iperf_listening() { inb ss -Hltn "sport = :$IPERF_PORT" | grep -q LISTEN; }
run_point() {
	local size=$1 srv c0 c1 t0 t1 rc js=$out/raw/$cur_row-$1.json
	inb iperf3 -s -1 -p "$IPERF_PORT" >"$tmp/iperf-server.log" 2>&1 &
	srv=$! # not in $pids: stopped below (and by stop_all's sweep of NSB on exit)
	if ! wait_for 5 iperf_listening; then
		printf '%s\t%s\tfailed: iperf3 server did not listen\t0\t0\t0\t0\t-\n' "$cur_row" "$size" >>"$tmp/points.tsv"
		stop_pids $srv
		return
	fi
	t0=$(date +%s.%N)
	c0=$(cpu_ticks)
	# in the background and waited for, so that a signal is handled at once
	# (bash runs a trap only after a foreground command ends)
	ina timeout -k 3 $((T + 20)) iperf3 -c "$iperf_dst" -p "$IPERF_PORT" -t "$T" -l "$size" \
		--connect-timeout 3000 -J >"$js" 2>"$tmp/iperf-client.err" &
	wait $!
	rc=$?
	c1=$(cpu_ticks)
	t1=$(date +%s.%N)
	stop_pids $srv
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cur_row" "$size" \
		"$([ $rc -eq 0 ] && echo ok || echo "failed: iperf3 exit $rc")" \
		"${c0% *}" "${c0#* }" "${c1% *}" "${c1#* }" "$(awk "BEGIN { print $t1 - $t0 }")" >>"$tmp/points.tsv"
}

# ---- the run ----------------------------------------------------------------------
: >"$tmp/points.tsv"
: >"$tmp/rows.tsv"
verof() { "$@" 2>/dev/null | head -1; }
{
	printf 'date\t%s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	printf 'commit\t%s\n' "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD 2>/dev/null || echo ' (with local changes)')"
	printf 'cpu\t%s\n' "$(sed -nE 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)"
	printf 'cores\t%s\n' "$(nproc)"
	printf 'kernel\t%s\n' "$(uname -r)"
	printf 'iperf3\t%s\n' "$(verof iperf3 --version)"
	printf 'openvpn\t%s\n' "$(verof openvpn --version | awk '{print $1, $2}')"
	printf 'wireguard-go\t%s\n' "$(verof wireguard-go --version)"
	printf 'twag-tunnel\t%s\n' "$([ -x "$TUNNEL" ] && echo "$build/twag-tunnel" || echo "not built")"
	printf 'time\t%s\n' "$T"
	printf 'sizes\t%s\n' "$sizes"
	printf 'encap\t%s\n' "$encap"
	printf 'twag_args\t%s\n' "${twag_args:-(none)}"
	printf 'clk_tck\t%s\n' "$CLK_TCK"
} >"$tmp/meta.tsv"

# the machine's CPU with nothing of ours running, for the header (2 s)
c0=$(cpu_ticks)
sleep 2
c1=$(cpu_ticks)
printf 'idle_busy_ticks\t%s\nidle_total_ticks\t%s\n' $((${c1% *} - ${c0% *})) $((${c1#* } - ${c0#* })) >>"$tmp/meta.tsv"

setup_bed || { log "could not set up the namespaces and the veth pair"; exit 1; }
log "namespaces $NSA, $NSB; rows:$rows; sizes: $sizes; $T s per point"
for cur_row in $rows; do
	log "$cur_row: setting up"
	if ! setup_row "$cur_row"; then
		log "$cur_row: $row_note"
		printf '%s\t%s\t%s\n' "$cur_row" "$(note_status "$row_note")" "$row_note" >>"$tmp/rows.tsv"
		teardown_row "$cur_row"
		continue
	fi
	# one ping through the tunnel (a WireGuard or IKE-less handshake may eat
	# the first: up to 3 tries, 2 s each)
	ok=0
	for _ in 1 2 3; do
		if ina ping -c 1 -W 2 "$iperf_dst" >/dev/null 2>&1; then ok=1; break; fi
	done
	if [ $ok -eq 0 ]; then
		log "$cur_row: failed: no traffic (ping $iperf_dst)"
		printf '%s\tfailed\tfailed: no traffic (%s)\n' "$cur_row" "$row_note" >>"$tmp/rows.tsv"
		teardown_row "$cur_row"
		continue
	fi
	# the machine's CPU for 1 s with the tunnel up and idle: other work on
	# the machine, or a tunnel that spins, shows here
	c0=$(cpu_ticks)
	sleep 1
	c1=$(cpu_ticks)
	printf '%s\tok\t%s\t%s\n' "$cur_row" "$row_note" \
		"$(awk "BEGIN { t = ${c1#* } - ${c0#* }; if (t > 0) printf \"%.1f\", 100 * (${c1% *} - ${c0% *}) / t }")" >>"$tmp/rows.tsv"
	log "$cur_row: $row_note"
	for size in $sizes; do
		run_point "$size"
		log "$cur_row -l $size: $(tail -1 "$tmp/points.tsv" | cut -f3)"
	done
	teardown_row "$cur_row"
done

# the report's inputs stay with the results: tunnel_report.py can be re-run on them
cp "$tmp/meta.tsv" "$tmp/rows.tsv" "$tmp/points.tsv" "$out/" || exit 1
python3 bench/tunnel_report.py --meta "$out/meta.tsv" --rows "$out/rows.tsv" \
	--points "$out/points.tsv" --out "$out" || { log "report failed"; exit 1; }
cat "$out/tunnel.md"
log "results in $out"
