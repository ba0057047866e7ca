/* arena_outbox.c: arena results kept until answered (arena_outbox.h). */
#include "arena_outbox.h"

#include <string.h>

xq_outbox_entry_t *xq_outbox_add(xq_outbox_t *o, const xq_outbox_entry_t *r, bool *dropped) {
  bool full = o->n == XQ_OUTBOX_MAX;
  if (full) {
    memmove(&o->e[0], &o->e[1], sizeof o->e[0] * (XQ_OUTBOX_MAX - 1));
    o->n--;
  }
  if (dropped) *dropped = full;
  xq_outbox_entry_t *e = &o->e[o->n++];
  *e = *r;
  e->request_id = 0;
  return e;
}

bool xq_outbox_answered(xq_outbox_t *o, uint64_t request_id, xq_outbox_entry_t *out) {
  if (!request_id) return false;
  for (int i = 0; i < o->n; i++)
    if (o->e[i].request_id == request_id) {
      if (out) *out = o->e[i];
      memmove(&o->e[i], &o->e[i + 1], sizeof o->e[0] * (size_t)(o->n - i - 1));
      o->n--;
      return true;
    }
  return false;
}
