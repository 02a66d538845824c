#!/usr/bin/env bash
# After `make install` into the running system (no DESTDIR), as root: the
# twag user and group from the installed sysusers.d file, the installed
# configuration readable by that group (twagd reads it after the unit has
# made it that user), and the linker cache for libtwag.so. With a DESTDIR
# (a staging tree, a package) nothing here runs: the package's own scripts
# do it.
#   scripts/post-install.sh DESTDIR SYSUSERSDIR SYSCONFDIR LIBDIR
set -u
# shellcheck disable=SC2034 # libdir: named for the reader; ldconfig reads ld.so.conf
destdir=$1 sysusersdir=$2 sysconfdir=$3 libdir=$4
[ -z "$destdir" ] || exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "install: not root: create the twag user yourself (systemd-sysusers $sysusersdir/twag.conf)" >&2
	exit 0
fi
if ! getent passwd twag >/dev/null; then
	if command -v systemd-sysusers >/dev/null 2>&1; then
		systemd-sysusers "$sysusersdir/twag.conf" ||
			echo "install: systemd-sysusers failed: create the twag user yourself" >&2
	else
		echo "install: no systemd-sysusers: create the twag user yourself" \
			"(useradd --system --home-dir /var/lib/twag --shell /usr/sbin/nologin twag)" >&2
	fi
fi
conf=$sysconfdir/twag/twagd.conf
if getent group twag >/dev/null && [ "$(stat -c %G "$conf")" = root ]; then
	chgrp twag "$conf" && chmod 0640 "$conf"
fi
command -v ldconfig >/dev/null 2>&1 && ldconfig
exit 0
