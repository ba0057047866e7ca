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

#include "copies.h"
#include "pacing.h"
#include "replay.h"
#include "seen.h"
#include "size.h"
#include "sources.h"

#endif
