/* batch_shard.c: Batch samples -> a training shard, on the pool thread that trains it. */
#include "batch_shard.h"

#include <stdlib.h>

#include "nn/encode.h"

int xq_batch_shard_init(xq_batch_shard_t *s, int threads, xq_errbuf_t *eb) {
  s->batch = NULL;
  s->threads = threads;
  s->rank = calloc((size_t)threads, sizeof *s->rank);
  if (!s->rank) return xq_err_set(eb, XQ_ENOMEM, "cannot allocate %d decoders", threads);
  return 0;
}

void xq_batch_shard_close(xq_batch_shard_t *s) {
  free(s->rank);
  s->rank = NULL;
}

int xq_batch_shard_fill(void *ctx, int rank, int lo, int hi, nn_shard_t *shard) {
  xq_batch_shard_t *bs = ctx;
  xq_batch_shard_rank_t *r = &bs->rank[rank];
  int n = 0;
  shard->pi_offset[0] = 0;
  for (int i = lo; i < hi; i++) {
    xq_errbuf_t eb = {{0}};
    if (xq_sample_from_proto(&r->sample, &r->pos, bs->batch->samples[i], &eb)) {
      r->rejected++;
      r->last = eb;
      continue;
    }
    const xq_sample_t *s = &r->sample;
    xq_sample_encode(shard->planes + (size_t)n * shard->nplanes * NN_HW, s, shard->nplanes);
    nn_encode_legal(&r->pos, shard->mask + (size_t)n * NN_POLICY_SIZE, NULL, NULL);
    int32_t off = shard->pi_offset[n];
    for (int k = 0; k < s->npi; k++) {
      shard->pi[off + k].index = s->pi_index[k];
      shard->pi[off + k].prob = s->pi_prob[k];
    }
    shard->pi_offset[n + 1] = off + s->npi;
    shard->z[n] = s->z;
    xq_sample_survival(shard->surv_mask + (size_t)n * NN_HW,
                       shard->surv_target + (size_t)n * NN_HW, s);
    xq_sample_reply(shard->reply + 2 * (size_t)n, s);
    n++;
  }
  return n;
}

int64_t xq_batch_shard_rejected(const xq_batch_shard_t *s) {
  int64_t sum = 0;
  for (int t = 0; t < s->threads; t++) sum += s->rank[t].rejected;
  return sum;
}
