/*
 * twag — twagd's privilege drop (--user NAME [--group NAME]) and the check
 * that the store is usable by the user twagd runs as.
 *
 * Started as root, twagd binds its sockets (RADIUS, metrics) and opens
 * its log file and notify socket, then becomes NAME here: supplementary
 * groups (initgroups), then the group, then the user, in that order (the
 * group cannot be changed once the user is not root), and checks that
 * root cannot be regained. The store and its KEK are opened after the
 * drop, as NAME: every file twagd writes from then on is that user's. A
 * store left to root is named as such, with its owner and mode
 * (tw_srv_store_access below, before the KEK beside it is read, whose
 * refusal would otherwise come first and say less).
 *
 * Not root: --user naming the user twagd already runs as (a unit with
 * User=twag whose config says user = twag) does nothing; any other user
 * is refused, as a process that is not root cannot become it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "srv.h"

enum { PW_BUF = 16384 };

int tw_srv_privdrop(const struct tw_srv_config *c, bool *dropped, char *err, size_t err_len)
{
	static char buf[PW_BUF], gbuf[PW_BUF];
	struct passwd pw, *pwp = NULL;
	struct group gr, *grp = NULL;
	uid_t uid;
	gid_t gid;
	int rc;

	*dropped = false;
	if (c->user[0] == 0) {
		if (c->group[0] != 0) {
			snprintf(err, err_len, "--group needs --user");
			return TW_ERR_INVAL;
		}
		return TW_OK;
	}
	rc = getpwnam_r(c->user, &pw, buf, sizeof(buf), &pwp);
	if (pwp == NULL) {
		snprintf(err, err_len, "--user: no such user '%s'%s%s", c->user,
			 rc != 0 ? ": " : "", rc != 0 ? strerror(rc) : "");
		return TW_ERR_NOTFOUND;
	}
	uid = pw.pw_uid;
	gid = pw.pw_gid;
	if (c->group[0] != 0) {
		rc = getgrnam_r(c->group, &gr, gbuf, sizeof(gbuf), &grp);
		if (grp == NULL) {
			snprintf(err, err_len, "--group: no such group '%s'%s%s", c->group,
				 rc != 0 ? ": " : "", rc != 0 ? strerror(rc) : "");
			return TW_ERR_NOTFOUND;
		}
		gid = grp->gr_gid;
	}
	if (uid == 0) {
		snprintf(err, err_len, "--user: '%s' is uid 0: twagd would keep root", c->user);
		return TW_ERR_INVAL;
	}
	if (geteuid() != 0) {
		if (getuid() == uid && geteuid() == uid && getgid() == gid && getegid() == gid)
			return TW_OK; /* already that user and group */
		snprintf(err, err_len,
			 "--user %s: twagd runs as uid %u gid %u, not root, and cannot become "
			 "uid %u gid %u (start it as root, or as that user)",
			 c->user, (unsigned)geteuid(), (unsigned)getegid(), (unsigned)uid,
			 (unsigned)gid);
		return TW_ERR_STATE;
	}
	/* the order matters: groups and gid while still root, then uid */
	if (initgroups(pw.pw_name, gid) != 0) {
		snprintf(err, err_len, "--user %s: initgroups: %s", c->user, strerror(errno));
		return TW_ERR_IO;
	}
	if (setgid(gid) != 0) {
		snprintf(err, err_len, "--user %s: setgid(%u): %s", c->user, (unsigned)gid,
			 strerror(errno));
		return TW_ERR_IO;
	}
	if (setuid(uid) != 0) {
		snprintf(err, err_len, "--user %s: setuid(%u): %s", c->user, (unsigned)uid,
			 strerror(errno));
		return TW_ERR_IO;
	}
	/* setuid from root sets all three user ids and clears the
	 * capabilities; a kernel or a securebits setting that kept any of
	 * them would let root come back */
	if (getuid() != uid || geteuid() != uid || getgid() != gid || getegid() != gid ||
	    setuid(0) == 0 || setgid(0) == 0) {
		snprintf(err, err_len, "--user %s: the drop did not hold (root can be regained)",
			 c->user);
		return TW_ERR_STATE;
	}
	*dropped = true;
	return TW_OK;
}

/* mode on path for the real ids (the effective ones after a drop); false
 * with the owner and mode in err when permissions refuse it. */
static bool usable(const char *path, int mode, char *err, size_t err_len, const char *what)
{
	struct stat sb;
	int e;

	if (access(path, mode) == 0)
		return true;
	e = errno;
	/* only permissions here, the privilege drop's concern: the store's
	 * own check (tw_store_open) names the other causes (a read-only
	 * file system, a missing directory) */
	if (e != EACCES || stat(path, &sb) != 0)
		return true;
	snprintf(err, err_len,
		 "%s %s is not writable by uid %u gid %u (it is owner %u group %u mode %04o): "
		 "chown the store's directory and files to the user twagd runs as",
		 what, path, (unsigned)geteuid(), (unsigned)getegid(), (unsigned)sb.st_uid,
		 (unsigned)sb.st_gid, (unsigned)(sb.st_mode & 07777));
	return false;
}

int tw_srv_store_access(const char *path, char *err, size_t err_len)
{
	char dir[TW_SRV_PATH_MAX], side[TW_SRV_PATH_MAX + 8];
	const char *slash = strrchr(path, '/');
	size_t dl;

	/* SQLite in WAL mode writes PATH-wal and PATH-shm beside the file
	 * (and a missing store is created there) */
	if (slash == NULL) {
		snprintf(dir, sizeof(dir), ".");
	} else {
		dl = slash == path ? 1 : (size_t)(slash - path);
		if (dl >= sizeof(dir))
			dl = sizeof(dir) - 1;
		memcpy(dir, path, dl);
		dir[dl] = 0;
	}
	if (!usable(dir, W_OK | X_OK, err, err_len, "store directory"))
		return TW_ERR_IO;
	if (access(path, F_OK) == 0 && !usable(path, R_OK | W_OK, err, err_len, "store"))
		return TW_ERR_IO;
	for (int i = 0; i < 2; i++) {
		snprintf(side, sizeof(side), "%s%s", path, i == 0 ? "-wal" : "-shm");
		if (access(side, F_OK) == 0 &&
		    !usable(side, R_OK | W_OK, err, err_len, "store file"))
			return TW_ERR_IO;
	}
	return TW_OK;
}
