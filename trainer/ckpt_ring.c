/* ckpt_ring.c: rotation of the trainer's checkpoint generations (ckpt_ring.h). */

#include "ckpt_ring.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void trainer_ckpt_gen_path(char *out, size_t cap, const char *base, int gen) {
  if (gen == 0) snprintf(out, cap, "%s", base);
  else snprintf(out, cap, "%s.%d", base, gen);
}

static bool exists(const char *path) {
  struct stat st;
  return stat(path, &st) == 0;
}

bool trainer_ckpt_any(const char *base) {
  char p[1024];
  for (int g = 0; g <= TRAINER_MAX_KEEP; g++) {
    trainer_ckpt_gen_path(p, sizeof p, base, g);
    if (exists(p)) return true;
  }
  return false;
}

int trainer_ckpt_rotate(const char *base, int keep, xq_errbuf_t *eb) {
  if (keep <= 0 || !exists(base)) return 0;
  if (keep > TRAINER_MAX_KEEP) keep = TRAINER_MAX_KEEP;
  char from[1024], to[1024];
  /* Oldest first, so no rename lands on a generation not yet moved. A missing generation
   * (ENOENT) is a gap, not an error: the shift goes on around it. */
  for (int g = keep - 1; g >= 1; g--) {
    trainer_ckpt_gen_path(from, sizeof from, base, g);
    trainer_ckpt_gen_path(to, sizeof to, base, g + 1);
    if (rename(from, to) && errno != ENOENT)
      return xq_err_set(eb, XQ_EIO, "cannot rename %s to %s: %s", from, to, strerror(errno));
  }
  trainer_ckpt_gen_path(to, sizeof to, base, 1);
  if (unlink(to) && errno != ENOENT)
    return xq_err_set(eb, XQ_EIO, "cannot remove %s: %s", to, strerror(errno));
  /* A hard link keeps base in place until the new checkpoint is renamed over it; where
   * the file system has no links, a rename leaves base absent for that moment, and a
   * resume then finds the same checkpoint as generation 1. */
  if (link(base, to) && rename(base, to))
    return xq_err_set(eb, XQ_EIO, "cannot keep %s as %s: %s", base, to, strerror(errno));
  return 0;
}

int trainer_ckpt_set_aside(const char *path, char *moved_to, size_t cap, xq_errbuf_t *eb) {
  snprintf(moved_to, cap, "%s.damaged", path);
  if (rename(path, moved_to))
    return xq_err_set(eb, XQ_EIO, "cannot move %s to %s: %s", path, moved_to, strerror(errno));
  return 0;
}
