/*
 * job_check.h: the worker bounds everything its coordinator sends before it acts on it: a
 * job's and a Welcome's settings (simulations, plies, noise, temperatures...) and an arena
 * pair. Every integer has a ceiling (the coordinator's own setting bounds, config.c), every
 * float must be finite and in its range; zero keeps meaning "the default" as in proto3.
 * A job that fails is refused as a whole, with the field, its value and its range in eb.
 */
#ifndef XQ_WORKER_JOB_CHECK_H
#define XQ_WORKER_JOB_CHECK_H

#include "support/error.h"
#include "xqz.pb-c.h"

#define XQ_JOB_SIMS_MAX 100000   /* simulations per move (the coordinator's bound) */
#define XQ_JOB_PLIES_MAX 1000    /* game-length cap (xq_pos_t's history) */
#define XQ_JOB_GAMES_MAX 100000  /* games of one self-play job */
#define XQ_JOB_GUMBEL_MAX 128    /* Gumbel root actions */
#define XQ_JOB_FEN_MAX 159       /* an arena opening's FEN, in bytes */

/* 0 when every field of s is in range (s may be NULL: nothing to check). */
int xq_job_check_settings(const Xqz__SelfplaySettings *s, xq_errbuf_t *eb);
/* 0 when the self-play job (its games and settings) is in range. */
int xq_job_check_selfplay(const Xqz__SelfplayJob *j, xq_errbuf_t *eb);
/* 0 when the arena pair (simulations, plies, adjudication, opening length, precision) is
 * in range. */
int xq_job_check_arena(const Xqz__ArenaJob *j, xq_errbuf_t *eb);

#endif
