/*
 * ckpt_ring.h: the trainer keeps its last few good checkpoints, not one. Before a new
 * checkpoint replaces DIR/trainer.xqzc, the generations shift by one: trainer.xqzc.2 ->
 * .3, .1 -> .2, and trainer.xqzc -> .1 (a hard link, so the newest stays in place until
 * the new one is renamed over it). On resume the newest file that loads (and whose
 * weights are all finite) wins; each newer one that does not is moved aside to
 * NAME.damaged and named in an error line, so an operator sees what was lost and why.
 * Issue 47 item 12: a diverging trainer had overwritten its one good checkpoint.
 */
#ifndef XQ_TRAINER_CKPT_RING_H
#define XQ_TRAINER_CKPT_RING_H

#include <stdbool.h>
#include <stddef.h>

#include "support/error.h"

#define TRAINER_MAX_KEEP 9 /* older generations kept at most: trainer.xqzc.1 .. .9 */

/* The path of generation gen (0: base itself, k: "base.k") into out. */
void trainer_ckpt_gen_path(char *out, size_t cap, const char *base, int gen);
/* true when base or any generation 1..TRAINER_MAX_KEEP exists. */
bool trainer_ckpt_any(const char *base);
/* Shifts the generations before a new checkpoint is written to base: keeps `keep` older
 * ones (0: none, the new one simply replaces base). Nothing moves when base does not
 * exist (a failed save must not push good generations out). Returns 0, or XQ_EIO with the
 * file and the reason in eb (the caller warns and still writes: the new one is good). */
int trainer_ckpt_rotate(const char *base, int keep, xq_errbuf_t *eb);
/* Moves a checkpoint that does not load aside to "path.damaged" (replacing an older one of
 * that name), so no later rotation keeps it as a good generation. Returns 0 or XQ_EIO. */
int trainer_ckpt_set_aside(const char *path, char *moved_to, size_t cap, xq_errbuf_t *eb);

#endif
