/*
 * replay.h: a worker whose self-play is replaced by a recorded campaign's games
 * (`xqz-worker --replay DIR --replay-minutes M`). The games of DIR's segment files are
 * loaded at start, in the order the recorded coordinator stored them, and handed to the
 * play thread one at a time at an even pace in positions (full-search plies, the samples
 * a game gives): the recorded positions spread over M minutes from the first self-play
 * task, on the wall clock (time spent on arena pairs or paused counts: the games that fell
 * due meanwhile follow at once). Each is spooled and sent as the worker's own game, so
 * the coordinator ingests it like any other; arena pairs are played as usual, between
 * short replay tasks (a task sends the games due and returns, waiting at most a second).
 * A restarted worker replays from the first game again. Two campaigns fed the same recording
 * see the same data at the same pace whatever their trainers cost: the population's
 * A/B with the members' CPU not taken from self-play (docs/population.md).
 *
 * Used by the play thread only: no lock.
 */
#ifndef XQ_WORKER_REPLAY_H
#define XQ_WORKER_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/error.h"

typedef struct xq_replay xq_replay_t;

/* Loads the stored games of dir (a campaign directory or its games/) that decode and have
 * a full-search ply, in order, once each (a record stored twice under one worker id and
 * seq is loaded once), until they hold max_bytes (a weeks-long campaign's games would not
 * fit in memory: the walk stops there, xq_replay_left_out);
 * minutes > 0 spreads their positions over that many minutes, 0 sends them as fast as the
 * spool takes them. 0, or an error naming dir (XQ_EIO: no segment files; XQ_EINVAL: no
 * usable game). */
int xq_replay_open(xq_replay_t **out, const char *dir, double minutes, uint64_t max_bytes,
                   xq_errbuf_t *eb);
void xq_replay_free(xq_replay_t **r);

size_t xq_replay_games(const xq_replay_t *r);
uint64_t xq_replay_positions(const xq_replay_t *r);
/* Games the source skipped at load: stored records that do not decode. */
size_t xq_replay_skipped(const xq_replay_t *r);
/* Payload bytes loaded (the memory the recording takes, about). */
uint64_t xq_replay_bytes(const xq_replay_t *r);
/* true when max_bytes ended the load: the recording's later games were not read. */
bool xq_replay_left_out(const xq_replay_t *r);
/* Records skipped at load as repeats of an earlier (worker id, seq). */
uint64_t xq_replay_repeats(const xq_replay_t *r);
/* Games handed out so far. */
size_t xq_replay_sent(const xq_replay_t *r);

/* Milliseconds after the start at which game i is due: the positions of games 0..i-1 at
 * the pace (0 for every game without a pace). */
int64_t xq_replay_due_ms(const xq_replay_t *r, size_t i);

/* The next game, once due. now_ms is the caller's monotonic clock; the first call starts
 * the replay's clock. Returns 1 with *rec and *len (the stored game-record payload, owned by
 * r) and *positions (its full-search plies), and advances; 0 with *wait_ms > 0 when the
 * next game is not yet due; -1 when every game has been handed out. */
int xq_replay_next(xq_replay_t *r, int64_t now_ms, const unsigned char **rec, size_t *len,
                   uint64_t *positions, int64_t *wait_ms);
/* Takes back the game the last xq_replay_next handed out (it could not be spooled): the
 * next call hands it out again. */
void xq_replay_unread(xq_replay_t *r);

#endif
