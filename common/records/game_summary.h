/*
 * game_summary.h: what a set of stored self-play games says about a campaign: how games
 * end (by colour and by reason), how long they are, and what they teach the value head:
 * the share of training samples with a decisive target and the correlation between the
 * material count and that target (the check behind `adjudicate_material`,
 * docs/experiments/03-adjudicate-material.md).
 * `xqz games` prints it per segment file. Targets are computed as the coordinator's
 * ingest computes them (xq_samples_from_record_adjudicated).
 */
#ifndef XQ_GAME_SUMMARY_H
#define XQ_GAME_SUMMARY_H

#include <stddef.h>
#include <stdint.h>

#include "rules/rules.h"
#include "records/game_record.h"
#include "support/error.h"

#define XQ_SUMMARY_REASONS (XQ_REASON_RESIGN + 1) /* by_reason slots, index = xq_reason_t */

typedef struct {
  double adjudicate_pawns; /* the campaign's adjudicate_material (0: capped games drawn) */
  uint64_t games, plies, bad; /* bad: records that fail to decode or replay (skipped) */
  uint64_t red_wins, black_wins, draws; /* by the rules, as stored */
  uint64_t by_reason[XQ_SUMMARY_REASONS];
  uint64_t samples, decisive; /* training samples, and those with z != 0 */
  /* Damage in segment files: runs of bad bytes between valid records (skipped; the
   * coordinator quarantines them at its next start), and bytes after the last one. */
  uint64_t damaged_runs, damaged_bytes, torn_bytes;
  /* Sums for the correlation of material (side to move's view, pawns) with z. */
  double sm, sz, smm, szz, smz;
} xq_game_summary_t;

void xq_game_summary_init(xq_game_summary_t *s, double adjudicate_pawns);
/* Adds one decoded game record. A record whose samples do not replay counts in bad and
 * returns its error (eb says why); s is otherwise unchanged. */
int xq_game_summary_add(xq_game_summary_t *s, const xq_game_record_t *r, xq_errbuf_t *eb);
/* Adds b's counts into a (same adjudication). */
void xq_game_summary_merge(xq_game_summary_t *a, const xq_game_summary_t *b);
/* Pearson correlation of material with z over the samples; NAN with fewer than two
 * samples or when either is constant. */
double xq_game_summary_material_z(const xq_game_summary_t *s);

#endif
