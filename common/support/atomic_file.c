/* atomic_file.c: temp file -> fsync -> rename -> fsync(dir), and a checked whole-file read. */
#include "support/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

/* fsyncs the directory holding path, so the rename itself is durable. */
int xq_fsync_dir(const char *dir) {
  int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return -1;
  int rc = fsync(fd);
  int err = errno;
  close(fd);
  errno = err;
  return rc == 0 ? 0 : -1;
}

static int fsync_parent(const char *path) {
  char dir[PATH_MAX];
  const char *slash = strrchr(path, '/');
  if (!slash) {
    strcpy(dir, ".");
  } else if (slash == path) {
    strcpy(dir, "/");
  } else {
    size_t len = (size_t)(slash - path);
    if (len >= sizeof dir) return -1;
    memcpy(dir, path, len);
    dir[len] = 0;
  }
  return xq_fsync_dir(dir);
}

int xq_atomic_write(const char *path, const void *const *parts, const size_t *sizes,
                    int n_parts, xq_errbuf_t *eb) {
  char tmp[PATH_MAX];
  if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
    return xq_err_set(eb, XQ_EINVAL, "%s: path too long", path);
  int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) return xq_err_set(eb, XQ_EIO, "%s: cannot create: %s", tmp, strerror(errno));
  for (int i = 0; i < n_parts; i++) {
    if (write_all(fd, parts[i], sizes[i]) != 0) {
      int e = errno;
      close(fd);
      unlink(tmp);
      return xq_err_set(eb, XQ_EIO, "%s: write failed: %s", tmp, strerror(e));
    }
  }
  if (fsync(fd) != 0) {
    int e = errno;
    close(fd);
    unlink(tmp);
    return xq_err_set(eb, XQ_EIO, "%s: fsync failed: %s", tmp, strerror(e));
  }
  if (close(fd) != 0) {
    int e = errno;
    unlink(tmp);
    return xq_err_set(eb, XQ_EIO, "%s: close failed: %s", tmp, strerror(e));
  }
  if (rename(tmp, path) != 0) {
    int e = errno;
    unlink(tmp);
    return xq_err_set(eb, XQ_EIO, "%s: rename failed: %s", path, strerror(e));
  }
  if (fsync_parent(path) != 0)
    return xq_err_set(eb, XQ_EIO, "%s: fsync of directory failed: %s", path, strerror(errno));
  return 0;
}

int xq_read_file(const char *path, size_t max_size, unsigned char **data, size_t *size,
                 xq_errbuf_t *eb) {
  *data = NULL;
  *size = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return xq_err_set(eb, XQ_EIO, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
    fclose(f);
    return xq_err_set(eb, XQ_EIO, "%s: not a regular file", path);
  }
  if ((unsigned long long)st.st_size > max_size) {
    fclose(f);
    return xq_err_set(eb, XQ_ERANGE, "%s: %lld bytes, more than the limit of %zu", path,
                      (long long)st.st_size, max_size);
  }
  size_t n = (size_t)st.st_size;
  unsigned char *buf = malloc(n ? n : 1);
  if (!buf) {
    fclose(f);
    return xq_err_set(eb, XQ_ENOMEM, "%s: cannot allocate %zu bytes", path, n);
  }
  size_t got = fread(buf, 1, n, f);
  int err = ferror(f);
  fclose(f);
  if (err || got != n) {
    free(buf);
    return xq_err_set(eb, XQ_EIO, "%s: read failed", path);
  }
  *data = buf;
  *size = n;
  return 0;
}
