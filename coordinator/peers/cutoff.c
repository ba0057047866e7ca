/* cutoff.c: per-identity fault counting and time-limited cut-offs (see cutoff.h). */
#include "cutoff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/log.h"

#define COMP "coordinator"

static int find(const xqc_cutoff_t *t, const char *id) {
  for (int i = 0; i < t->n; i++)
    if (!strcmp(t->v[i].id, id)) return i;
  return -1;
}

static void lift(xqc_cutoff_t *t, xqc_cutoff_entry_t *e) {
  e->cut = false;
  e->faults = 0;
  t->ncut--;
  XQ_LOGI(COMP, "peer let back in (its cut-off ran out) peer=%s", e->id);
}

bool xqc_cutoff_fault(xqc_cutoff_t *t, const char *id, uint64_t now_ms,
                      const xqc_cutoff_limits_t *lim) {
  int i = find(t, id);
  if (i < 0) {
    if (t->n == t->cap) {
      int ncap = t->cap ? t->cap * 2 : 32;
      xqc_cutoff_entry_t *nv = realloc(t->v, (size_t)ncap * sizeof *nv);
      if (!nv) return false; /* out of memory: count nothing rather than fail */
      t->v = nv;
      t->cap = ncap;
    }
    i = t->n++;
    memset(&t->v[i], 0, sizeof t->v[i]);
    snprintf(t->v[i].id, sizeof t->v[i].id, "%s", id);
  }
  xqc_cutoff_entry_t *e = &t->v[i];
  if (e->cut) return false;
  if (e->faults == 0 || now_ms - e->window_start_ms > lim->window_ms) {
    e->window_start_ms = now_ms;
    e->faults = 0;
  }
  if (++e->faults < lim->max_faults) return false;
  e->cut = true;
  e->until_ms = now_ms + lim->cutoff_ms;
  t->ncut++;
  t->cuts++;
  XQ_LOGE(COMP, "peer cut off: its messages are ignored for cutoff_s; check that peer's "
          "software version peer=%s faults=%lld window_s=%llu cutoff_s=%llu", e->id,
          (long long)e->faults, (unsigned long long)(lim->window_ms / 1000),
          (unsigned long long)(lim->cutoff_ms / 1000));
  return true;
}

bool xqc_cutoff_active(xqc_cutoff_t *t, const char *id, uint64_t now_ms) {
  if (t->ncut == 0) return false;
  int i = find(t, id);
  if (i < 0 || !t->v[i].cut) return false;
  if (now_ms < t->v[i].until_ms) return true;
  lift(t, &t->v[i]);
  return false;
}

void xqc_cutoff_expire(xqc_cutoff_t *t, uint64_t now_ms, const xqc_cutoff_limits_t *lim) {
  int kept = 0;
  for (int i = 0; i < t->n; i++) {
    xqc_cutoff_entry_t *e = &t->v[i];
    if (e->cut && now_ms >= e->until_ms) lift(t, e);
    if (!e->cut && (e->faults == 0 || now_ms - e->window_start_ms > lim->window_ms)) continue;
    if (kept != i) t->v[kept] = *e;
    kept++;
  }
  t->n = kept;
}

void xqc_cutoff_close(xqc_cutoff_t *t) {
  free(t->v);
  memset(t, 0, sizeof *t);
}
