/*
 * nn_model.h: the network's architecture and its parameters.
 *
 * Architecture (docs/network.md): 3x3 conv stem (no bias) + BN + ReLU; `blocks` residual
 * blocks (conv-BN-ReLU-conv-BN, + skip, ReLU), of which those gpool_every names add a
 * global pooling bias between their two convs (nn_gpool_forward in nn_layers.h), or, in a
 * net with line convolutions, every block adds its rank and file bias there (nn_lines.h); policy
 * head 1x1 conv -> 2 channels, BN, ReLU, FC 180 -> 2086 (with bias); value head 1x1 conv
 * -> 1 channel (or nn_arch_wide_value_channels(C), the "v" suffix), BN, ReLU, FC
 * 90 x channels -> hidden (bias), ReLU, FC hidden -> 1 (bias), tanh;
 * optionally (arch.survival) the survival head: 1x1 conv -> 1 channel with bias, no BN,
 * one logit per square that the piece there survives to the end of its game; optionally
 * (arch.reply) the opponent-reply head: 1x1 conv -> 2 channels, no bias, no BN, over the
 * 90 squares of each a softmax: where the opponent's reply starts (channel 0) and ends
 * (channel 1). The search computes neither: they are training targets for the tower.
 *
 * Parameters live in one flat float array carved into named tensors by a table (name,
 * shape, offset, whether L2 applies), in the order the weights file stores them. The
 * gradient array has the same layout, so the optimiser is one flat loop. Batch-norm
 * running means and variances live in a second flat array (`stats`), also carved by
 * the table order. A model also owns its BN-folded inference weights (nn_model_fold).
 *
 * Ownership: nn_model_new allocates everything; nn_model_free(&m) releases it.
 */
#ifndef NN_MODEL_H
#define NN_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "support/error.h"

#define NN_INPUT_PLANES 18     /* the planes of every net (input version 1) */
#define NN_INPUT_VERSION 1
#define NN_ATTACK_PLANES 2     /* a net with attack planes reads two more (version 2) */
#define NN_INPUT_VERSION_ATTACKS 2
#define NN_INPUT_PLANES_MAX (NN_INPUT_PLANES + NN_ATTACK_PLANES)
#define NN_POLICY_SIZE 2086 /* == XQ_POLICY_SIZE */
#define NN_HW 90
#define NN_LINE_TAPS 19 /* 9 squares of a rank + 10 of a file: line weights per channel pair */
#define NN_MAX_BLOCKS 40
#define NN_MAX_CHANNELS 512
#define NN_MAX_HIDDEN 1024
#define NN_MAX_CONVS (1 + 2 * NN_MAX_BLOCKS)
#define NN_MAX_TENSORS (3 * NN_MAX_CONVS + 2 * NN_MAX_BLOCKS + 16)
#define NN_BN_EPS 1e-5f
#define NN_BN_MOMENTUM 0.1f

typedef struct {
  int blocks;          /* residual blocks B (0..NN_MAX_BLOCKS) */
  int channels;        /* tower channels C */
  int policy_channels; /* 1x1 conv channels of the policy head (2) */
  int value_channels;  /* 1x1 conv channels of the value head: 1, or
                        * nn_arch_wide_value_channels(channels) for the wide head */
  int value_hidden;    /* hidden units of the value head */
  int gpool_every;     /* 0: no global pooling; k >= 1: every k-th block, counting from the
                        * last, pools (block b pools when (blocks - 1 - b) % k == 0), so
                        * k = 1 pools every block (nn_arch_pools) */
  int survival;        /* 1: the per-piece survival head (nn_infer_survival), 0: none */
  int lines;           /* 1: every block has a rank and file bias (nn_lines.h), 0: none;
                        * not together with global pooling */
  int attacks;         /* 1: the input has the two attack planes (nn_encode.h, input
                        * version 2), 0: the 18 planes of version 1 */
  int reply;           /* 1: the opponent-reply head (from and to squares), 0: none */
} nn_arch_t;

/* Input planes a net of architecture a reads: NN_INPUT_PLANES, plus NN_ATTACK_PLANES
 * with attack planes. Every buffer of encoded positions strides by it. */
static inline int nn_arch_input_planes(const nn_arch_t *a) {
  return NN_INPUT_PLANES + (a->attacks ? NN_ATTACK_PLANES : 0);
}
/* The input-plane version a net of architecture a is trained on (its file records it). */
static inline int nn_arch_input_version(const nn_arch_t *a) {
  return a->attacks ? NN_INPUT_VERSION_ATTACKS : NN_INPUT_VERSION;
}

/* The standard architecture for B blocks of C channels: heads 2 and 1 channels, value
 * hidden 2*C (so tiny 2x16 -> 32, default 6x64 -> 128, large 10x128 -> 256). */
nn_arch_t nn_arch_make(int blocks, int channels);
/* Presets "tiny" (2x16), "default" (6x64), "large" (10x128), or "BxC" for B blocks of C
 * channels within NN_MAX_BLOCKS and NN_MAX_CHANNELS. Global pooling: a preset with "-g"
 * ("tiny-g") or "BxCg" pools in every block, "BxCgK" in every K-th block counting from
 * the last (1 <= K <= NN_MAX_BLOCKS). Line convolutions in every block: "-l" ("tiny-l")
 * or "BxCl", in place of the pooling suffix. Then the attack planes: "a" ("tiny-a",
 * "tiny-la", "2x16a"). Then the wide value head: "v" ("tiny-v", "2x16av",
 * nn_arch_wide_value_channels). The survival head: "s" ("tiny-s", "tiny-gs", "tiny-ls",
 * "2x16s", "2x16gs", "2x16g2s", "2x16ls", "2x16las"). The opponent-reply head: a trailing
 * "r" ("tiny-r", "2x16r", "2x16sr"). A preset's suffixes are those of BxC after a dash. Returns 0 or XQ_EINVAL (*out untouched). */
int nn_arch_preset(const char *name, nn_arch_t *out);
/* Value-head channels of the wide value head (the "v" suffix) of a net of C channels:
 * C / 4 as in Leela Chess Zero's heads (4 on tiny, 16 on 6x64, 32 on 10x128), at least 2.
 * A single channel, the default, must squeeze both sides' material through one ReLU. */
int nn_arch_wide_value_channels(int channels);
/* Whether block b (0..blocks-1) has a global pooling bias. */
bool nn_arch_pools(const nn_arch_t *a, int b);
/* How to spell a network size, for the error messages of every command that takes one.
 * Short enough that the coordinator's "command line: --net_size: ... is not a network
 * size: " message keeps it whole in an error buffer (256 bytes) for names up to 7 bytes. */
#define NN_ARCH_SPELLING                                                                   \
  "tiny (2x16), default (6x64), large (10x128) or BxC (4x16), then in order g (global "   \
  "pooling) or l (line convs), a (attack planes), v (wide value head), s (survival head), " \
  "r (reply head)"
/* Writes the "BxC[g[K]|l][a][v][s][r]" spelling of a (which nn_arch_preset reads back) into buf. */
void nn_arch_name(const nn_arch_t *a, char *buf, size_t n);
/* Checks every field against its bounds. Returns 0 or XQ_ERANGE with the reason in eb. */
int nn_arch_validate(const nn_arch_t *a, xq_errbuf_t *eb);
/* Floats of parameters and of BN running statistics of an architecture (no allocation;
 * loaders check a file's sizes with it before allocating anything). */
void nn_arch_counts(const nn_arch_t *a, size_t *nparams, size_t *nstats);
/* Forward multiply-adds per position as the search evaluates it (for benchmarks): the
 * survival and reply heads, which the search never computes, are not counted. */
double nn_arch_flops(const nn_arch_t *a);

/* One row of the parameter table. */
typedef struct {
  char name[24];    /* e.g. "tower.3.conv.w" */
  int ndim;
  int shape[4];
  size_t offset;    /* in floats from the start of the params array */
  size_t size;      /* product of shape */
  bool decay;       /* L2 applies (conv and FC weights; not BN or biases) */
} nn_param_info_t;

/* A convolution followed by batch norm: parameter pointers and running statistics. */
typedef struct {
  float *w;     /* (cout, cin, k, k), k = 3 in the tower, 1 in the heads */
  float *gamma; /* (cout) */
  float *beta;  /* (cout) */
  float *mean;  /* (cout) running mean (stats array; NULL in gradient views) */
  float *var;   /* (cout) running variance (unbiased, like PyTorch) */
  int cin, cout, k;
} nn_convbn_t;

/* Named views into a flat array (parameters or gradients). */
typedef struct {
  nn_convbn_t tower[NN_MAX_CONVS]; /* [0] stem; block b: [1 + 2b], [2 + 2b] */
  float *gpool_w[NN_MAX_BLOCKS];   /* (C, 2C) global pooling bias of block b, NULL when
                                    * the block does not pool; L2 applies */
  float *rank_w[NN_MAX_BLOCKS];    /* (C, C, 1, 9) and (C, C, 10, 1): block b's rank and */
  float *file_w[NN_MAX_BLOCKS];    /* file bias (nn_lines.h), NULL without lines; L2 applies */
  nn_convbn_t pol;                 /* policy 1x1 conv: w (2, C, 1, 1) */
  float *pol_fc_w;                 /* (2086, 180) */
  float *pol_fc_b;                 /* (2086) */
  nn_convbn_t val;                 /* value 1x1 conv: w (1, C, 1, 1) */
  float *val_fc1_w;                /* (hidden, 90) */
  float *val_fc1_b;                /* (hidden) */
  float *val_fc2_w;                /* (1, hidden) */
  float *val_fc2_b;                /* (1) */
  float *surv_w;                   /* (1, C, 1, 1) survival head 1x1 conv, NULL without the
                                    * head; L2 applies */
  float *surv_b;                   /* (1) its bias (no BN: inference uses both as they are) */
  float *reply_w;                  /* (2, C, 1, 1) opponent-reply head 1x1 conv, no bias (the
                                    * softmax over squares ignores one), NULL without the
                                    * head; L2 applies */
} nn_tensors_t;

/* BN folded into the preceding conv: w' = w * g / sqrt(var + eps),
 * b' = beta - mean * g / sqrt(var + eps). */
typedef struct {
  float *tower_wp[NN_MAX_CONVS]; /* prepared 3x3 weights (nn_conv3x3_prepare layout) */
  float *tower_b[NN_MAX_CONVS];  /* (C) */
  float *pol_w;                  /* (2, C) */
  float *pol_b;                  /* (2) */
  float *val_w;                  /* (1, C) */
  float *val_b;                  /* (1) */
  float *pol_fc_wt; /* (policy_channels * 90, 2086): the policy FC's weights transposed, so
                     * inference multiplies by them as they lie (nn_gemm_small.h) */
  bool valid;                    /* set by nn_model_fold, cleared by nothing else */
} nn_folded_t;

struct nn_bf16_tower; /* nn_bf16.h */

typedef struct {
  nn_arch_t arch;
  int nconvs;     /* 1 + 2 * blocks */
  int ntensors;
  nn_param_info_t table[NN_MAX_TENSORS];
  size_t nparams; /* floats in params and grads */
  size_t nstats;  /* floats in stats (running mean and var of every BN) */
  float *params;  /* (nparams) */
  float *grads;   /* (nparams) */
  float *stats;   /* (nstats) */
  nn_tensors_t p; /* views into params (and stats) */
  nn_tensors_t g; /* views into grads */
  /* Training-mode 3x3 weights in the prepared layout (re-prepared each forward). */
  float *prepared[NN_MAX_CONVS];
  float *prepared_mem;
  nn_folded_t fold;
  float *fold_mem;
  /* The folded tower in bf16 (nn_bf16.h), NULL for fp32 inference: owned, refreshed by
   * nn_model_fold, freed by nn_model_free. */
  struct nn_bf16_tower *bf16;
  float *fold_tmp; /* (max cout * cin * 9) scratch for folding */
} nn_model_t;

/* Allocates a model (parameters zero, running var 1). Returns 0 or a negative code. */
int nn_model_new(nn_model_t **out, const nn_arch_t *arch, xq_errbuf_t *eb);
/* NULL-safe; sets *m to NULL. */
void nn_model_free(nn_model_t **m);
/* He-normal conv and FC weights (std sqrt(2 / fan_in)), FC biases 0, BN gamma 1 and
 * beta 0, running mean 0 and var 1. The value head's last layer uses std
 * sqrt(1 / fan_in). Global pooling and line weights start at zero and draw nothing from
 * the generator, so a pooling (or line) net starts as the same function, with the same weights
 * everywhere else, as the net without them of the same seed. The survival head is
 * drawn last (weight std sqrt(1 / C), bias 0), so a net with the head has the same tower,
 * policy and value weights as the net without it of the same seed; the reply head is
 * drawn after it (weight std sqrt(1 / C)). Deterministic in seed. */
void nn_model_init(nn_model_t *m, uint64_t seed);
/* Fills *view as a gradient view of m: the same parameters, statistics and prepared
 * weights (shared, read by the view), but gradients in grads (m->nparams floats, owned by
 * the caller). A shard of a data-parallel step accumulates into its own view. The view
 * owns nothing: never nn_model_free it; it is valid while m and grads are. */
void nn_model_grad_view(nn_model_t *view, const nn_model_t *m, float *grads);
/* Zeroes the gradient array. */
void nn_model_zero_grad(nn_model_t *m);
/* Computes the folded inference weights from params and running stats. Call after
 * loading and after training steps before inference. */
void nn_model_fold(nn_model_t *m);
/* Prepares the unfolded 3x3 weights for the training forward pass. */
void nn_model_prepare_train(nn_model_t *m);
/* Sum of squares of all decayed weights (the L2 term before its coefficient). */
double nn_model_l2(const nn_model_t *m);

#endif
