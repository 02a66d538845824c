/*
 * twag test harness: a SQLite VFS that fails writes and syncs on demand
 * (fault_vfs.h).
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include <sqlite3.h>

#include "fault_vfs.h"

/*
 * A pass-through VFS over the default one whose files fail on demand: WAL
 * writes (what a commit in WAL mode does) with SQLITE_IOERR_WRITE, syncs
 * (a synchronous=FULL commit, a checkpoint) with SQLITE_IOERR_FSYNC. A
 * full disk or a failing device looks like this to the store.
 */
_Atomic int fault_wal_write, fault_sync;
_Atomic long fault_writes, fault_syncs, fault_write_from, fault_sync_at;
static sqlite3_vfs *fault_base, fault_vfs;

struct fault_file {
	sqlite3_file base;
	sqlite3_file *real; /* the real VFS's file, FF_OFF octets in */
	bool wal;
};

/* where the real file starts: aligned as malloc aligns */
#define FF_OFF ((sizeof(struct fault_file) + 15) / 16 * 16)
#define FF_REAL(f) (((struct fault_file *)(void *)(f))->real)

static int ff_close(sqlite3_file *f)
{
	return FF_REAL(f)->pMethods->xClose(FF_REAL(f));
}
static int ff_read(sqlite3_file *f, void *b, int n, sqlite3_int64 off)
{
	return FF_REAL(f)->pMethods->xRead(FF_REAL(f), b, n, off);
}
static int ff_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 off)
{
	long nth = atomic_fetch_add(&fault_writes, 1) + 1;
	long from = atomic_load(&fault_write_from);

	if (((struct fault_file *)(void *)f)->wal && atomic_load(&fault_wal_write))
		return SQLITE_IOERR_WRITE;
	if (from > 0 && nth >= from)
		return SQLITE_FULL;
	return FF_REAL(f)->pMethods->xWrite(FF_REAL(f), b, n, off);
}
static int ff_truncate(sqlite3_file *f, sqlite3_int64 n)
{
	return FF_REAL(f)->pMethods->xTruncate(FF_REAL(f), n);
}
static int ff_sync(sqlite3_file *f, int flags)
{
	long nth = atomic_fetch_add(&fault_syncs, 1) + 1;

	if (atomic_load(&fault_sync) || nth == atomic_load(&fault_sync_at))
		return SQLITE_IOERR_FSYNC;
	return FF_REAL(f)->pMethods->xSync(FF_REAL(f), flags);
}
static int ff_size(sqlite3_file *f, sqlite3_int64 *n)
{
	return FF_REAL(f)->pMethods->xFileSize(FF_REAL(f), n);
}
static int ff_lock(sqlite3_file *f, int l)
{
	return FF_REAL(f)->pMethods->xLock(FF_REAL(f), l);
}
static int ff_unlock(sqlite3_file *f, int l)
{
	return FF_REAL(f)->pMethods->xUnlock(FF_REAL(f), l);
}
static int ff_reserved(sqlite3_file *f, int *r)
{
	return FF_REAL(f)->pMethods->xCheckReservedLock(FF_REAL(f), r);
}
static int ff_control(sqlite3_file *f, int op, void *arg)
{
	return FF_REAL(f)->pMethods->xFileControl(FF_REAL(f), op, arg);
}
static int ff_sector(sqlite3_file *f)
{
	return FF_REAL(f)->pMethods->xSectorSize(FF_REAL(f));
}
static int ff_device(sqlite3_file *f)
{
	return FF_REAL(f)->pMethods->xDeviceCharacteristics(FF_REAL(f));
}
static int ff_shm_map(sqlite3_file *f, int pg, int sz, int ext, void volatile **pp)
{
	return FF_REAL(f)->pMethods->xShmMap(FF_REAL(f), pg, sz, ext, pp);
}
static int ff_shm_lock(sqlite3_file *f, int off, int n, int flags)
{
	return FF_REAL(f)->pMethods->xShmLock(FF_REAL(f), off, n, flags);
}
static void ff_shm_barrier(sqlite3_file *f)
{
	FF_REAL(f)->pMethods->xShmBarrier(FF_REAL(f));
}
static int ff_shm_unmap(sqlite3_file *f, int del)
{
	return FF_REAL(f)->pMethods->xShmUnmap(FF_REAL(f), del);
}
static int ff_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp)
{
	return FF_REAL(f)->pMethods->xFetch(FF_REAL(f), off, n, pp);
}
static int ff_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p)
{
	return FF_REAL(f)->pMethods->xUnfetch(FF_REAL(f), off, p);
}

static const sqlite3_io_methods ff_methods = {
	3, ff_close, ff_read, ff_write, ff_truncate, ff_sync, ff_size, ff_lock, ff_unlock,
	ff_reserved, ff_control, ff_sector, ff_device, ff_shm_map, ff_shm_lock,
	ff_shm_barrier, ff_shm_unmap, ff_fetch, ff_unfetch,
};

static int ff_open(sqlite3_vfs *v, sqlite3_filename name, sqlite3_file *f, int flags, int *out)
{
	struct fault_file *ff = (struct fault_file *)(void *)f;
	int rc;

	(void)v;
	ff->real = (sqlite3_file *)(void *)((char *)ff + FF_OFF);
	ff->real->pMethods = NULL;
	ff->wal = (flags & SQLITE_OPEN_WAL) != 0;
	rc = fault_base->xOpen(fault_base, name, ff->real, flags, out);
	/* methods of our own only over a file the real VFS opened, of the
	 * version they are written for; a real file left with methods is
	 * closed (SQLite closes ours only when we set them) */
	f->pMethods = rc == SQLITE_OK && ff->real->pMethods != NULL &&
			      ff->real->pMethods->iVersion >= 3 ? &ff_methods : NULL;
	if (f->pMethods == NULL) {
		if (ff->real->pMethods != NULL)
			ff->real->pMethods->xClose(ff->real);
		if (rc == SQLITE_OK)
			rc = SQLITE_CANTOPEN;
	}
	return rc;
}

/* The fault VFS as the default (connections opened from now on use it). */
bool fault_vfs_on(void)
{
	fault_base = sqlite3_vfs_find(NULL);
	if (fault_base == NULL)
		return false;
	fault_vfs = *fault_base;
	fault_vfs.zName = "twag-test-fault";
	fault_vfs.pNext = NULL;
	fault_vfs.szOsFile = (int)FF_OFF + fault_base->szOsFile;
	fault_vfs.xOpen = ff_open;
	fault_vfs_reset();
	return sqlite3_vfs_register(&fault_vfs, 1) == SQLITE_OK;
}

void fault_vfs_reset(void)
{
	atomic_store(&fault_wal_write, 0);
	atomic_store(&fault_sync, 0);
	atomic_store(&fault_writes, 0);
	atomic_store(&fault_syncs, 0);
	atomic_store(&fault_write_from, 0);
	atomic_store(&fault_sync_at, 0);
}

void fault_vfs_off(void)
{
	fault_vfs_reset();
	sqlite3_vfs_unregister(&fault_vfs);
}

