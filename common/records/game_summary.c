/*
 * game_summary.c: counts over stored self-play games (see game_summary.h).
 */
#include "records/game_summary.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rules/material.h"
#include "records/targets.h"

void xq_game_summary_init(xq_game_summary_t *s, double adjudicate_pawns) {
  memset(s, 0, sizeof *s);
  s->adjudicate_pawns = adjudicate_pawns;
}

int xq_game_summary_add(xq_game_summary_t *s, const xq_game_record_t *r, xq_errbuf_t *eb) {
  xq_sample_t *out = malloc((size_t)(r->nplies + 1) * sizeof *out);
  if (!out) {
    s->bad++;
    return xq_err_set(eb, XQ_ENOMEM, "out of memory for %d samples", r->nplies + 1);
  }
  int n = xq_samples_from_record_adjudicated(r, out, r->nplies + 1, s->adjudicate_pawns, eb);
  if (n < 0) {
    s->bad++;
    free(out);
    return n;
  }
  s->games++;
  s->plies += (uint64_t)r->nplies;
  if (r->result == XQ_RESULT_RED_WIN) s->red_wins++;
  else if (r->result == XQ_RESULT_BLACK_WIN) s->black_wins++;
  else s->draws++;
  if ((unsigned)r->reason < XQ_SUMMARY_REASONS) s->by_reason[r->reason]++;
  for (int k = 0; k < n; k++) {
    double m = xq_material_balance(out[k].board) / 2.0;
    if (out[k].side == XQ_BLACK) m = -m;
    double z = out[k].z;
    s->samples++;
    s->decisive += z != 0.0;
    s->sm += m;
    s->sz += z;
    s->smm += m * m;
    s->szz += z * z;
    s->smz += m * z;
  }
  free(out);
  return 0;
}

void xq_game_summary_merge(xq_game_summary_t *a, const xq_game_summary_t *b) {
  a->games += b->games;
  a->plies += b->plies;
  a->bad += b->bad;
  a->red_wins += b->red_wins;
  a->black_wins += b->black_wins;
  a->draws += b->draws;
  for (int i = 0; i < XQ_SUMMARY_REASONS; i++) a->by_reason[i] += b->by_reason[i];
  a->samples += b->samples;
  a->decisive += b->decisive;
  a->damaged_runs += b->damaged_runs;
  a->damaged_bytes += b->damaged_bytes;
  a->torn_bytes += b->torn_bytes;
  a->sm += b->sm;
  a->sz += b->sz;
  a->smm += b->smm;
  a->szz += b->szz;
  a->smz += b->smz;
}

double xq_game_summary_material_z(const xq_game_summary_t *s) {
  if (s->samples < 2) return NAN;
  double n = (double)s->samples;
  double cov = s->smz / n - (s->sm / n) * (s->sz / n);
  double vm = s->smm / n - (s->sm / n) * (s->sm / n);
  double vz = s->szz / n - (s->sz / n) * (s->sz / n);
  if (vm <= 1e-12 || vz <= 1e-12) return NAN;
  return cov / sqrt(vm * vz);
}
