/*
 * twag test harness: a pass-through SQLite VFS over the default one whose
 * files fail on demand, as a full disk or a failing device looks to the
 * store:
 *   fault_wal_write  set: every WAL write fails (SQLITE_IOERR_WRITE);
 *   fault_sync       set: every sync fails (SQLITE_IOERR_FSYNC);
 *   fault_write_from N > 0: the N-th write through the VFS (any file) and
 *                    every one after it fail with SQLITE_FULL;
 *   fault_sync_at    N > 0: the N-th sync fails (once).
 * fault_writes / fault_syncs count the writes and syncs made since the
 * last reset, failed ones included.
 */
#ifndef TW_FAULT_VFS_H
#define TW_FAULT_VFS_H

#include <stdatomic.h>
#include <stdbool.h>

extern _Atomic int fault_wal_write, fault_sync;
extern _Atomic long fault_writes, fault_syncs, fault_write_from, fault_sync_at;

/* The fault VFS as the default (connections opened from now on use it);
 * every fault off, counters zero. */
bool fault_vfs_on(void);
/* Every fault off, counters zero. */
void fault_vfs_reset(void);
/* Faults off, the VFS unregistered. */
void fault_vfs_off(void);

#endif
