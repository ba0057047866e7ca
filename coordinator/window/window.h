/*
 * window.h: the replay window's room, its one face. The window is where self-play's games
 * wait to be trained on; this folder holds everything about it:
 *
 *   replay.h   the window itself: the newest W samples in a ring, each tagged with its
 *              source, sampled uniformly into the trainer's batches
 *   size.h     W as a function of the positions ingested (the growing window)
 *   pacing.h   when the trainer may have a batch: the window full enough, and at most
 *              `reuse` samples served per position ingested
 *   seen.h     the games already stored, by (worker id, seq): a resent game is not
 *              stored twice
 *   sources.h  who sent the samples in the window (the tags), so a ban can find them
 *   copies.h   the games in the window by content: the same game under new seqs is refused
 *
 * Bottom floor: these modules take what they need as arguments and never include coord.h.
 * The coordinator's ingest (ingest.c) fills the window and the sets, its BatchRequest
 * handler (requests.c) asks pacing.h and serves from replay.h.
 */
#ifndef XQC_WINDOW_H
#define XQC_WINDOW_H

#include <stdint.h>

#include "copies.h"
#include "pacing.h"
#include "replay.h"
#include "seen.h"
#include "size.h"
#include "sources.h"

/* The window's state, one struct the coordinator holds (xqc_t.window). */
typedef struct {
  xqc_replay_t replay;
  xqc_seen_t seen;
  xqc_copies_t copies;
  xqc_sources_t sources;
  uint64_t samples_served; /* samples sent to the trainer since this start */
  /* Positions rebuilt from the game segments at start. The pacing counts only the
   * positions ingested since (samples_served starts at 0 too), so a restart does not
   * release R samples for every position of the campaign at once: the trainer would train
   * on the window unpaced until it had served them all. */
  uint64_t positions_at_open;
} xqc_window_t;

#endif
