/*
 * twag — the store's key-encryption key (KEK): 256 bits for AES key wrap
 * (RFC 3394 / RFC 5649), never kept in the database. Sources, first match
 * wins: --kek-file, the TWAG_KEK environment variable, "<db>.kek" beside
 * the database (created on first use, 0600, written aside and linked in so
 * two starters never write two different keys nor read a half-written one).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store_internal.h"
#include "twag/bytes.h"
#include "twag/hex.h"

enum { KEK_HEX = 2 * TW_STORE_KEK_LEN, KEK_FILE_MAX = KEK_HEX + 2 };

/* errbuf gets the printf-style message (if there is room for one). */
void store_say(char *errbuf, size_t errbuf_len, const char *fmt, ...)
{
	va_list ap;

	if (errbuf == NULL || errbuf_len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(errbuf, errbuf_len, fmt, ap);
	va_end(ap);
}

int store_random(void *out, size_t len)
{
	uint8_t *p = out;

	while (len > 0) {
		ssize_t r = getrandom(p, len, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			return TW_ERR_IO;
		}
		p += r;
		len -= (size_t)r;
	}
	return TW_OK;
}

/* Exactly 64 hex digits, optionally one trailing newline. */
static int kek_parse(const char *text, size_t len, uint8_t kek[static 32])
{
	size_t got = 0;

	if (len == KEK_HEX + 1 && text[KEK_HEX] == '\n')
		len--;
	if (len != KEK_HEX)
		return TW_ERR_DECODE;
	if (tw_hex_decode(kek, TW_STORE_KEK_LEN, &got, text, len) != TW_OK ||
	    got != TW_STORE_KEK_LEN) {
		tw_wipe(kek, TW_STORE_KEK_LEN);
		return TW_ERR_DECODE;
	}
	return TW_OK;
}

static int kek_read_fd(int fd, const char *path, uint8_t kek[static 32], char *errbuf,
		       size_t errbuf_len)
{
	char buf[KEK_FILE_MAX + 1];
	size_t len = 0;
	struct stat sb;
	int rc;

	if (fstat(fd, &sb) != 0) {
		store_say(errbuf, errbuf_len, "KEK file %s: %s", path, strerror(errno));
		return TW_ERR_IO;
	}
	if (!S_ISREG(sb.st_mode)) {
		store_say(errbuf, errbuf_len, "KEK file %s: not a regular file", path);
		return TW_ERR_INVAL;
	}
	/* Like ssh with its private keys: a key others may read is no secret. */
	if ((sb.st_mode & (S_IRWXG | S_IRWXO)) != 0) {
		store_say(errbuf, errbuf_len,
		    "KEK file %s: mode %03o is open to group/others (chmod 600)", path,
		    (unsigned)(sb.st_mode & 0777));
		return TW_ERR_INVAL;
	}
	while (len < sizeof(buf)) {
		ssize_t r = read(fd, buf + len, sizeof(buf) - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			store_say(errbuf, errbuf_len, "KEK file %s: %s", path, strerror(errno));
			rc = TW_ERR_IO;
			goto out;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	rc = kek_parse(buf, len, kek);
	if (rc != TW_OK)
		store_say(errbuf, errbuf_len, "KEK file %s: expected exactly 64 hex digits", path);
out:
	tw_wipe(buf, sizeof(buf));
	return rc;
}

static int kek_read(const char *path, uint8_t kek[static 32], char *errbuf,
		    size_t errbuf_len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	int rc;

	if (fd < 0) {
		store_say(errbuf, errbuf_len, "KEK file %s: %s", path, strerror(errno));
		return TW_ERR_IO;
	}
	rc = kek_read_fd(fd, path, kek, errbuf, errbuf_len);
	close(fd);
	return rc;
}

/* fsync of the directory holding path, so a new name in it survives a
 * crash (the KEK must outlive the database it protects). */
static int sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	char *d = slash == NULL ? strdup(".") : strndup(path, (size_t)(slash - path) + 1);
	int fd, rc = TW_ERR_IO;

	if (d == NULL)
		return TW_ERR_NOMEM;
	fd = open(d, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd >= 0) {
		if (fsync(fd) == 0)
			rc = TW_OK;
		close(fd);
	}
	free(d);
	return rc;
}

/*
 * A fresh KEK in a new file. Written whole to a private temporary file
 * (mkostemp: 0600, O_EXCL) and only then linked to path: link(2) fails
 * with EEXIST when path exists, so of two processes starting at once one
 * publishes its KEK and the other reads that one, and nobody ever reads a
 * file still being written (O_EXCL on path itself left that window open:
 * the loser read an empty file and failed). A crash leaves at most a
 * temporary file, never an empty path.kek.
 */
static int kek_create(const char *path, uint8_t kek[static 32], char *errbuf,
		      size_t errbuf_len)
{
	char hex[KEK_HEX + 2];
	char *tmp = NULL;
	int fd = -1, rc = TW_OK;
	size_t off = 0;

	if (asprintf(&tmp, "%s.XXXXXX", path) < 0) {
		store_say(errbuf, errbuf_len, "out of memory");
		return TW_ERR_NOMEM;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		store_say(errbuf, errbuf_len, "KEK file %s: cannot create: %s", path, strerror(errno));
		rc = TW_ERR_IO;
		goto out;
	}
	rc = store_random(kek, TW_STORE_KEK_LEN);
	if (rc != TW_OK) {
		store_say(errbuf, errbuf_len, "getrandom failed");
		goto out;
	}
	tw_hex_encode(hex, kek, TW_STORE_KEK_LEN);
	hex[KEK_HEX] = '\n';
	while (off < KEK_HEX + 1) {
		ssize_t w = write(fd, hex + off, KEK_HEX + 1 - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			rc = TW_ERR_IO;
			break;
		}
		off += (size_t)w;
	}
	/* mkostemp makes it 0600 already; fsync so the KEK survives a crash
	 * with the database it protects */
	if (rc == TW_OK && (fchmod(fd, 0600) != 0 || fsync(fd) != 0))
		rc = TW_ERR_IO;
	if (rc != TW_OK) {
		store_say(errbuf, errbuf_len, "KEK file %s: cannot write: %s", path, strerror(errno));
		goto out;
	}
	if (link(tmp, path) != 0) {
		if (errno == EEXIST) {
			/* another starter won: use its KEK */
			tw_wipe(kek, TW_STORE_KEK_LEN);
			rc = kek_read(path, kek, errbuf, errbuf_len);
		} else {
			store_say(errbuf, errbuf_len, "KEK file %s: cannot create: %s", path,
			    strerror(errno));
			rc = TW_ERR_IO;
		}
		goto out;
	}
	if (sync_dir(path) != TW_OK) {
		store_say(errbuf, errbuf_len, "KEK file %s: cannot sync its directory", path);
		rc = TW_ERR_IO; /* the file stays: it may be durable, and is the KEK */
	}
out:
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	free(tmp);
	if (rc != TW_OK)
		tw_wipe(kek, TW_STORE_KEK_LEN);
	tw_wipe(hex, sizeof(hex));
	return rc;
}

int tw_store_kek_load(const char *kek_file, const char *db_path, bool create,
		      uint8_t kek[static 32], char *errbuf, size_t errbuf_len)
{
	const char *env;
	char *path = NULL;
	int rc;

	if (errbuf != NULL && errbuf_len > 0)
		errbuf[0] = '\0';
	if (kek == NULL)
		return TW_ERR_INVAL;
	if (kek_file != NULL)
		return kek_read(kek_file, kek, errbuf, errbuf_len);
	env = getenv("TWAG_KEK");
	if (env != NULL) {
		rc = kek_parse(env, strlen(env), kek);
		if (rc != TW_OK)
			store_say(errbuf, errbuf_len, "TWAG_KEK: expected exactly 64 hex digits");
		return rc;
	}
	if (db_path == NULL) {
		store_say(errbuf, errbuf_len, "no KEK: give a KEK file or TWAG_KEK");
		return TW_ERR_INVAL;
	}
	if (asprintf(&path, "%s.kek", db_path) < 0) {
		store_say(errbuf, errbuf_len, "out of memory");
		return TW_ERR_NOMEM;
	}
	if (access(path, F_OK) == 0 || !create) {
		rc = kek_read(path, kek, errbuf, errbuf_len);
	} else if (access(db_path, F_OK) == 0) {
		/* a new KEK would not open the keys already stored, and the
		 * file left behind would stand in the way of the real one */
		store_say(errbuf, errbuf_len,
			  "KEK file %s missing, and the database exists: its KEK is needed "
			  "(restore the file, or give --kek-file / TWAG_KEK)", path);
		rc = TW_ERR_IO;
	} else {
		rc = kek_create(path, kek, errbuf, errbuf_len);
	}
	free(path);
	return rc;
}
