/*
 * nn_checkpoint.h: the training checkpoint (.xqzc): a 64-byte header, the complete
 * .xqzn image of the model (weights, BN running statistics and, from .xqzn version 2 on,
 * the campaign id in meta->campaign_id), then the optimiser state (momentum buffer), then,
 * when the trainer averages its weights (nn_ema.h), the average (parameters, then running
 * statistics) with its count in the header. With the same batches, a trainer restarted
 * from a checkpoint continues bit for bit as if it had never stopped. The learning-rate
 * schedule is configuration, not state, and is not stored. Written atomically; loading validates
 * like nn_file.h. docs/weights-format.md gives every byte.
 */
#ifndef NN_CHECKPOINT_H
#define NN_CHECKPOINT_H

#include "nn/nn_ema.h"
#include "nn/nn_file.h"
#include "nn/nn_model.h"
#include "nn/nn_optim.h"

#define NN_CKPT_MAGIC "XQZC\r\n\x1a\n"
#define NN_CKPT_VERSION 1
#define NN_CKPT_HEADER_SIZE 64

/* Saves model, its metadata (meta->step is set from opt->step), opt and, when ema is not
 * NULL and holds an average (count > 0), that average (not its horizon: configuration)
 * to path. */
int nn_checkpoint_save(const char *path, const nn_model_t *m, const nn_file_meta_t *meta,
                       const nn_sgd_t *opt, const nn_ema_t *ema, xq_errbuf_t *eb);
/* Loads a checkpoint: a new model in *out, its metadata in meta, and the optimiser's
 * step, momentum, nesterov flag and velocity into opt (opt->velocity is allocated here;
 * release with nn_sgd_close; opt->schedule is left as the caller set it). When ema is not
 * NULL (zeroed, closed or holding an average, which is released first), a stored average
 * is loaded into it: ema->avg is allocated (release with nn_ema_close) and count set; its
 * horizon is left for the caller to set (configuration, not state). Without a stored
 * average ema stays empty (avg NULL, count 0). A stored average is ignored when ema is NULL. */
int nn_checkpoint_load(const char *path, nn_model_t **out, nn_file_meta_t *meta,
                       nn_sgd_t *opt, nn_ema_t *ema, xq_errbuf_t *eb);

#endif
