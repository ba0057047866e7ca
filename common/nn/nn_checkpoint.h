/*
 * nn_checkpoint.h: the training checkpoint (.xqzc): a 64-byte header, the complete
 * .xqzn image of the model (weights, BN running statistics and, from .xqzn version 2 on,
 * the campaign id in meta->campaign_id), then the optimiser state (momentum buffer). With the same batches, a trainer restarted from a checkpoint
 * continues bit for bit as if it had never stopped. The learning-rate schedule is
 * configuration, not state, and is not stored. Written atomically; loading validates
 * like nn_file.h. docs/weights-format.md gives every byte.
 */
#ifndef NN_CHECKPOINT_H
#define NN_CHECKPOINT_H

#include "nn/nn_file.h"
#include "nn/nn_model.h"
#include "nn/nn_optim.h"

#define NN_CKPT_MAGIC "XQZC\r\n\x1a\n"
#define NN_CKPT_VERSION 1
#define NN_CKPT_HEADER_SIZE 64

/* Saves model, its metadata (meta->step is set from opt->step) and opt to path. */
int nn_checkpoint_save(const char *path, const nn_model_t *m, const nn_file_meta_t *meta,
                       const nn_sgd_t *opt, xq_errbuf_t *eb);
/* Loads a checkpoint: a new model in *out, its metadata in meta, and the optimiser's
 * step, momentum, nesterov flag and velocity into opt (opt->velocity is allocated here;
 * release with nn_sgd_close; opt->schedule is left as the caller set it). */
int nn_checkpoint_load(const char *path, nn_model_t **out, nn_file_meta_t *meta,
                       nn_sgd_t *opt, xq_errbuf_t *eb);

#endif
