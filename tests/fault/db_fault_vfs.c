/*
 * db_fault_vfs.c: fault injection for the coordinator's campaign.db, linked only into the
 * test build xqz-coordinator-faults (in the style of SQLite's test_vfs.c, beside
 * seg_fault_io.c). When the environment names a control directory, XQZ_FAULT_DIR, a
 * SQLite VFS wrapping the default one becomes the default, and every write consults it:
 *
 *   db-full   while it exists, writes to campaign.db and its WAL fail with SQLITE_FULL,
 *             as on a full disk
 *
 * Everything else is passed through to the wrapped VFS unchanged.
 */
#define _DEFAULT_SOURCE
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *g_dir;
static sqlite3_vfs g_vfs, *g_real;

/* An open file: our methods first, the wrapped VFS's file right after it. */
typedef struct {
  sqlite3_file base;
  sqlite3_file *real;
} fault_file_t;

/* Whether the control file `name` exists now. */
static bool present(const char *name) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", g_dir, name);
  return access(path, F_OK) == 0;
}

static sqlite3_file *real(sqlite3_file *f) { return ((fault_file_t *)f)->real; }

static int f_close(sqlite3_file *f) {
  sqlite3_file *r = real(f);
  return r->pMethods ? r->pMethods->xClose(r) : SQLITE_OK;
}
static int f_read(sqlite3_file *f, void *b, int n, sqlite3_int64 off) {
  return real(f)->pMethods->xRead(real(f), b, n, off);
}
/* The fault: a full disk refuses every write while db-full exists. */
static int f_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 off) {
  if (present("db-full")) return SQLITE_FULL;
  return real(f)->pMethods->xWrite(real(f), b, n, off);
}
static int f_truncate(sqlite3_file *f, sqlite3_int64 size) {
  return real(f)->pMethods->xTruncate(real(f), size);
}
static int f_sync(sqlite3_file *f, int flags) { return real(f)->pMethods->xSync(real(f), flags); }
static int f_size(sqlite3_file *f, sqlite3_int64 *size) {
  return real(f)->pMethods->xFileSize(real(f), size);
}
static int f_lock(sqlite3_file *f, int l) { return real(f)->pMethods->xLock(real(f), l); }
static int f_unlock(sqlite3_file *f, int l) { return real(f)->pMethods->xUnlock(real(f), l); }
static int f_check(sqlite3_file *f, int *out) {
  return real(f)->pMethods->xCheckReservedLock(real(f), out);
}
static int f_control(sqlite3_file *f, int op, void *arg) {
  return real(f)->pMethods->xFileControl(real(f), op, arg);
}
static int f_sector(sqlite3_file *f) { return real(f)->pMethods->xSectorSize(real(f)); }
static int f_chars(sqlite3_file *f) { return real(f)->pMethods->xDeviceCharacteristics(real(f)); }
static int f_shm_map(sqlite3_file *f, int pg, int sz, int ext, void volatile **pp) {
  return real(f)->pMethods->xShmMap(real(f), pg, sz, ext, pp);
}
static int f_shm_lock(sqlite3_file *f, int off, int n, int flags) {
  return real(f)->pMethods->xShmLock(real(f), off, n, flags);
}
static void f_shm_barrier(sqlite3_file *f) { real(f)->pMethods->xShmBarrier(real(f)); }
static int f_shm_unmap(sqlite3_file *f, int del) {
  return real(f)->pMethods->xShmUnmap(real(f), del);
}
static int f_fetch(sqlite3_file *f, sqlite3_int64 off, int n, void **pp) {
  return real(f)->pMethods->xFetch(real(f), off, n, pp);
}
static int f_unfetch(sqlite3_file *f, sqlite3_int64 off, void *p) {
  return real(f)->pMethods->xUnfetch(real(f), off, p);
}

static const sqlite3_io_methods METHODS = {
    3,        f_close,  f_read,    f_write,   f_truncate,    f_sync,       f_size,
    f_lock,   f_unlock, f_check,   f_control, f_sector,      f_chars,      f_shm_map,
    f_shm_lock, f_shm_barrier, f_shm_unmap, f_fetch, f_unfetch,
};

static int v_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int flags, int *out) {
  (void)v;
  fault_file_t *ff = (fault_file_t *)f;
  ff->real = (sqlite3_file *)(ff + 1);
  memset(ff->real, 0, (size_t)g_real->szOsFile);
  int rc = g_real->xOpen(g_real, name, ff->real, flags, out);
  /* Without methods the file is not open and xClose is not called (sqlite3.h). */
  f->pMethods = ff->real->pMethods ? &METHODS : NULL;
  return rc;
}

__attribute__((constructor)) static void install(void) {
  g_dir = getenv("XQZ_FAULT_DIR");
  if (!g_dir || !*g_dir) return;
  g_real = sqlite3_vfs_find(NULL);
  if (!g_real) return;
  g_vfs = *g_real;
  g_vfs.zName = "xqz-fault";
  g_vfs.szOsFile = (int)sizeof(fault_file_t) + g_real->szOsFile;
  g_vfs.xOpen = v_open;
  g_vfs.pNext = NULL;
  if (sqlite3_vfs_register(&g_vfs, 1) != SQLITE_OK) abort();
}
