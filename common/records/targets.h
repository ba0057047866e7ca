/*
 * targets.h: what a game teaches: its training samples and their targets, made by
 * replaying the record with the rules. This is also the coordinator's ingest check: a
 * record these functions refuse is never stored.
 */
#ifndef XQ_RECORDS_TARGETS_H
#define XQ_RECORDS_TARGETS_H

#include "records/game_record.h"
#include "support/error.h"
#include "records/sample.h"

/* Replays a validated game record and appends one sample per recorded (full-search)
 * position to out (up to cap). Returns the number of samples, or a negative error with the
 * reason when the record is inconsistent (an illegal move, pi over an illegal move, a
 * result the rules do not give). This is the coordinator's ingest check. */
int xq_samples_from_record(const xq_game_record_t *rec, xq_sample_t *out, int cap,
                           xq_errbuf_t *eb);
/* The same, but a game stopped by the length cap (a draw by the rules) gives z as if the
 * side material_pawns pawns ahead on the final board had won (rules/material.h); 0 keeps
 * the draw. The record itself is unchanged: this is a training target only. */
int xq_samples_from_record_adjudicated(const xq_game_record_t *rec, xq_sample_t *out, int cap,
                                       double material_pawns, xq_errbuf_t *eb);

#endif
