#!/usr/bin/env bash
# Integration test of `make install` into a DESTDIR under /tmp/twag-*:
# the layout (programs, libtwag.a, libtwag.so with its SONAME and links,
# headers, twag.pc, man pages, the unit, the config), that a program
# builds against the installed library through pkg-config, dynamically
# and statically, and computes a published Milenage value, every
# program's --version, the man pages rendering without a warning and
# naming every option of their program's --help, `systemd-analyze verify`
# of the installed unit, a second install keeping an edited config, and
# `make uninstall`. Env BUILD = build dir. Prints "N passed, N failed".
set -u
cd "$(dirname "$0")/../.." || exit 2
. tests/integration/lib.sh
lib_begin install twag-install

dest=$tmp/dest
prefix=/usr/local
st=$dest$prefix
version=$(cat VERSION)
major=${version%%.*}
# the build's own flags: a sanitizer build's objects need its runtime
san=${TWAG_SANITIZER:-}
mk() { make --no-print-directory BUILD="$BUILD" ${san:+SANITIZER=$san} "$@"; }

if mk install DESTDIR="$dest" PREFIX=$prefix >"$tmp/install.log" 2>&1; then
	ok "make install DESTDIR PREFIX=$prefix"
else
	no "make install DESTDIR PREFIX=$prefix" "$tmp/install.log"
	finish
fi

# layout and modes
for f in bin/twag:755 bin/twag-load:755 bin/twag-bench:755 sbin/twagd:755 sbin/twag-tunnel:755 \
	lib/libtwag.a:644 lib/libtwag.so.$version:755 lib/pkgconfig/twag.pc:644 \
	include/twag/milenage.h:644 include/twag/version.h:644 \
	share/man/man1/twag.1:644 share/man/man1/twag-load.1:644 \
	share/man/man1/twag-bench.1:644 share/man/man8/twagd.8:644 share/man/man8/twag-tunnel.8:644 \
	share/doc/twag/twagd.conf.example:644 share/doc/twag/twagd.md:644 \
	lib/systemd/system/twagd.service:644 lib/sysusers.d/twag.conf:644 \
	etc/twag/twagd.conf:640; do
	p=$st/${f%%:*}
	m=$(stat -c %a "$p" 2>/dev/null)
	if [ "$m" = "${f#*:}" ] && [ -f "$p" ]; then ok "$p mode $m"; else no "$p: mode '${m:-missing}', want ${f#*:}"; fi
done
n_hdr=$(ls include/twag/*.h | wc -l)
n_inst=$(ls "$st"/include/twag/*.h 2>/dev/null | wc -l)
[ "$n_hdr" -eq "$n_inst" ] && ok "all $n_hdr public headers installed" || no "headers: $n_inst of $n_hdr installed"
[ "$(readlink "$st/lib/libtwag.so")" = "libtwag.so.$major" ] &&
	[ "$(readlink "$st/lib/libtwag.so.$major")" = "libtwag.so.$version" ] &&
	ok "libtwag.so -> libtwag.so.$major -> libtwag.so.$version" ||
	no "shared library links: $(ls -l "$st"/lib/libtwag.so* 2>&1 | tr '\n' ' ')"
soname=$(readelf -d "$st/lib/libtwag.so.$version" 2>/dev/null | sed -nE 's/.*\(SONAME\).*\[(.*)\]/\1/p')
[ "$soname" = "libtwag.so.$major" ] && ok "SONAME $soname" || no "SONAME '$soname', want libtwag.so.$major"
grep -q "^ExecStart=$prefix/sbin/twagd --config $prefix/etc/twag/twagd.conf --control-socket /run/twagd/control$" "$st/lib/systemd/system/twagd.service" &&
	ok "the unit starts the installed twagd with the installed config" ||
	no "unit ExecStart" "$st/lib/systemd/system/twagd.service"
grep -q '@[A-Z]*@' "$st/lib/systemd/system/twagd.service" "$st/lib/pkgconfig/twag.pc" "$st"/share/man/man*/* &&
	no "a @PLACEHOLDER@ left in an installed file" || ok "no @PLACEHOLDER@ left in the unit, twag.pc, man pages"

# every program's --version is the VERSION file's
for p in bin/twag bin/twag-load bin/twag-bench sbin/twagd sbin/twag-tunnel; do
	got=$("$st/$p" --version 2>&1)
	[ "$got" = "${p#*/} $version" ] && ok "$p --version: $got" || no "$p --version: '$got', want '${p#*/} $version'"
done

# a program against the installed library, found through pkg-config
cat >"$tmp/use.c" <<'C'
#include <stdio.h>
#include "twag/milenage.h"
#include "twag/version.h"
/* 3GPP TS 35.208 §4.3 Test Set 1: f2 (RES) */
int main(void)
{
	static const uint8_t k[16] = { 0x46, 0x5b, 0x5c, 0xe8, 0xb1, 0x99, 0xb4, 0x9f,
				       0xaa, 0x5f, 0x0a, 0x2e, 0xe2, 0x38, 0xa6, 0xbc };
	static const uint8_t opc[16] = { 0xcd, 0x63, 0xcb, 0x71, 0x95, 0x4a, 0x9f, 0x4e,
					 0x48, 0xa5, 0x99, 0x4e, 0x37, 0xa0, 0x2b, 0xaf };
	static const uint8_t rand_[16] = { 0x23, 0x55, 0x3c, 0xbe, 0x96, 0x37, 0xa8, 0x9d,
					   0x21, 0x8a, 0xe6, 0x4d, 0xae, 0x47, 0xbf, 0x35 };
	uint8_t res[8], ck[16], ik[16], ak[6];

	if (tw_milenage_f2345(k, opc, rand_, &tw_milenage_default_consts, res, ck, ik, ak) != 0)
		return 1;
	printf("version=%s res=", tw_version());
	for (int i = 0; i < 8; i++)
		printf("%02x", res[i]);
	printf("\n");
	return 0;
}
C
export PKG_CONFIG_PATH=$st/lib/pkgconfig PKG_CONFIG_SYSROOT_DIR=$dest
want="version=$version res=a54211d5e3ba50bf"
sanflag=${san:+-fsanitize=$san}
pc_cflags=$(pkg-config --cflags twag 2>"$tmp/pc.err")
pc_libs=$(pkg-config --libs twag 2>>"$tmp/pc.err")
pc_static=$(pkg-config --static --libs twag 2>>"$tmp/pc.err")
[ "$(pkg-config --modversion twag 2>/dev/null)" = "$version" ] && ok "pkg-config --modversion twag: $version" ||
	no "pkg-config twag" "$tmp/pc.err"
priv=0
for l in -lsqlite3 -lcrypto -lpthread; do
	case " $pc_static " in *" $l "*) priv=$((priv + 1)) ;; esac
done
[ $priv -eq 3 ] && ok "Libs.private: $pc_static" || no "pkg-config --static --libs twag: '$pc_static'"
# shellcheck disable=SC2086
if cc $sanflag $pc_cflags -o "$tmp/use-shared" "$tmp/use.c" $pc_libs >"$tmp/cc.log" 2>&1; then
	got=$(LD_LIBRARY_PATH=$st/lib "$tmp/use-shared" 2>&1)
	[ "$got" = "$want" ] && ok "built against libtwag.so (pkg-config): $got" || no "shared: '$got', want '$want'"
	readelf -d "$tmp/use-shared" | grep -q "NEEDED.*\[libtwag.so.$major\]" &&
		ok "the program needs libtwag.so.$major" || no "the program does not need libtwag.so.$major"
else
	no "cc against libtwag.so" "$tmp/cc.log"
fi
# static: libtwag.a and its private libraries (-lsqlite3 -lcrypto -lpthread)
# shellcheck disable=SC2086
if cc $sanflag $pc_cflags -o "$tmp/use-static" "$tmp/use.c" \
	-Wl,-Bstatic -ltwag -Wl,-Bdynamic ${pc_static/-ltwag/} >"$tmp/cc2.log" 2>&1; then
	got=$("$tmp/use-static" 2>&1)
	[ "$got" = "$want" ] && ok "built against libtwag.a (pkg-config --static): $got" || no "static: '$got', want '$want'"
	readelf -d "$tmp/use-static" | grep -q "NEEDED.*libtwag" &&
		no "the static build needs libtwag.so" || ok "the static build does not need libtwag.so"
else
	no "cc against libtwag.a" "$tmp/cc2.log"
fi

# man pages: render without a warning; every option of --help is there
for m in man1/twag.1:bin/twag man1/twag-load.1:bin/twag-load man1/twag-bench.1:bin/twag-bench \
	man8/twagd.8:sbin/twagd man8/twag-tunnel.8:sbin/twag-tunnel; do
	page=$st/share/man/${m%%:*}
	if groff -man -Tutf8 -ww -z "$page" >"$tmp/groff.log" 2>&1 && [ ! -s "$tmp/groff.log" ]; then
		ok "${m%%:*}: groff -man -ww renders it without a warning"
	else
		no "${m%%:*}: groff warnings" "$tmp/groff.log"
	fi
	if python3 tests/integration/mancheck.py "$page" "$st/${m#*:}" >"$tmp/mc.log" 2>&1; then
		ok "${m%%:*}: every option of ${m##*/} --help ($(cat "$tmp/mc.log"))"
	else
		no "${m%%:*}: options of ${m##*/} --help not in the page" "$tmp/mc.log"
	fi
done
# the check itself: a page without one of the options is caught
grep -v 'spread' "$st/share/man/man8/twagd.8" >"$tmp/short.8"
python3 tests/integration/mancheck.py "$tmp/short.8" "$st/sbin/twagd" >"$tmp/mc.log" 2>&1 &&
	no "mancheck missed an option left out" || ok "mancheck catches a page lacking --spread-by-identifier"

# the unit: systemd-analyze verify, on the installed file with its paths
# moved into the DESTDIR (verify checks that ExecStart exists, and man:
# pages through MANPATH); any line it prints is a failure
unit=$st/lib/systemd/system/twagd.service
for k in Type=notify User=twag Group=twag NoNewPrivileges=yes ProtectSystem=strict \
	StateDirectory=twag PrivateTmp=yes ProtectHome=yes CapabilityBoundingSet=CAP_NET_BIND_SERVICE \
	'RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX' SystemCallFilter=@system-service \
	'ExecReload=/bin/kill -HUP $MAINPID' WatchdogSec=30s; do
	grep -qxF "$k" "$unit" && ok "unit: $k" || no "unit lacks '$k'"
done
if command -v systemd-analyze >/dev/null 2>&1; then
	mkdir -p "$tmp/verify"
	sed "s|$prefix/|$st/|g" "$unit" >"$tmp/verify/twagd.service"
	# (what it says of other units installed on the machine, such as a
	# packaged freeradius.service, is not about ours)
	MANPATH=$st/share/man systemd-analyze verify "$tmp/verify/twagd.service" >"$tmp/verify.all" 2>&1
	vrc=$?
	grep -vE '^/(usr/)?(lib|etc)/systemd/system/[^ ]*:' "$tmp/verify.all" >"$tmp/verify.log"
	if { [ "$vrc" -eq 0 ] || [ "$(wc -l <"$tmp/verify.all")" -gt 0 ]; } && [ ! -s "$tmp/verify.log" ]; then
		ok "systemd-analyze verify twagd.service: clean"
	else
		no "systemd-analyze verify twagd.service" "$tmp/verify.log"
	fi
	# and it would say so: an unknown key is reported
	sed 's/^NoNewPrivileges=yes$/&\nNoSuchKey=yes/' "$tmp/verify/twagd.service" >"$tmp/verify/bad.service"
	MANPATH=$st/share/man systemd-analyze verify "$tmp/verify/bad.service" 2>&1 | grep -q NoSuchKey &&
		ok "systemd-analyze verify reports an unknown key (the check can fail)" ||
		no "systemd-analyze verify did not report an unknown key"
	lvl=$(systemd-analyze security --offline=yes "$tmp/verify/twagd.service" 2>/dev/null |
		sed -nE 's/.*Overall exposure level for .*: ([0-9.]+).*/\1/p')
	if [ -n "$lvl" ] && awk -v l="$lvl" 'BEGIN { exit !(l < 2.0) }'; then
		ok "systemd-analyze security: exposure $lvl (below 2.0)"
	else
		no "systemd-analyze security: exposure '${lvl:-?}', want below 2.0"
	fi
else
	echo "note: install: SKIP systemd-analyze verify: systemd-analyze is missing (scripts/deps.sh installs systemd)"
fi

# a second install keeps an edited config; uninstall leaves only it
echo "# edited by the operator" >>"$st/etc/twag/twagd.conf"
if mk install DESTDIR="$dest" PREFIX=$prefix >"$tmp/install2.log" 2>&1 &&
	grep -q "edited by the operator" "$st/etc/twag/twagd.conf"; then
	ok "a second make install keeps the existing config"
else
	no "second install: the config was replaced" "$tmp/install2.log"
fi
if mk uninstall DESTDIR="$dest" PREFIX=$prefix >"$tmp/uninstall.log" 2>&1; then
	left=$(cd "$dest" && find . \( -type f -o -type l \) | sort | tr '\n' ' ')
	[ "$left" = "./usr/local/etc/twag/twagd.conf " ] && ok "make uninstall leaves only the config" ||
		no "make uninstall left: $left"
else
	no "make uninstall" "$tmp/uninstall.log"
fi
finish
