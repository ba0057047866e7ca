/* nn_plan.c: sizes and carves the activation memory of a plan in one allocation. */
#include "nn/nn_plan.h"

#include <stdlib.h>
#include <string.h>

#include "nn/conv3x3.h"
#include "nn/nn_lines.h"

bool nn_plan_resident_tower(const nn_arch_t *a) {
  bool plain = !a->lines;
  for (int b = 0; b < a->blocks; b++) plain = plain && !nn_arch_pools(a, b);
  size_t weights = nn_conv3x3_prepared_floats(nn_arch_input_planes(a), a->channels) +
                   (size_t)2 * a->blocks * nn_conv3x3_prepared_floats(a->channels, a->channels);
  return plain && weights * sizeof(float) <= NN_RESIDENT_WEIGHT_BYTES;
}

/* Walks the layout twice: once to count (base NULL), once to assign pointers. */
static size_t layout(nn_plan_t *p, float *base) {
  const nn_arch_t *a = &p->arch;
  size_t off = 0, n = (size_t)p->max_n, C = (size_t)a->channels;
  size_t tower = n * C * NN_HW;
  int nconvs = 1 + 2 * a->blocks;
#define TAKE(ptr, count)                  \
  do {                                    \
    if (base) (ptr) = base + off;         \
    off += ((size_t)(count) + 15) & ~(size_t)15; /* keep 64-byte alignment */ \
  } while (0)
  size_t s1 = nn_conv3x3_scratch_floats(p->max_n, nn_arch_input_planes(a), a->channels);
  size_t s2 = nn_conv3x3_scratch_floats(p->max_n, a->channels, a->channels);
  if (s2 < s1) s2 = s1;
  /* The line bias runs between two convs, so it borrows their scratch. */
  size_t s3 = a->lines ? nn_lines_scratch_floats(p->max_n, a->channels) : 0;
  TAKE(p->scratch, s3 > s2 ? s3 : s2);
  if (p->training) {
    for (int l = 0; l < nconvs; l++) {
      TAKE(p->z[l], tower);
      TAKE(p->y[l], tower);
      TAKE(p->bn_mean[l], C);
      TAKE(p->bn_var[l], C);
    }
    for (int b = 0; b < a->blocks; b++)
      if (nn_arch_pools(a, b) || a->lines) TAKE(p->gy[b], tower);
    TAKE(p->pz, n * a->policy_channels * NN_HW);
    TAKE(p->vz, n * a->value_channels * NN_HW);
    TAKE(p->dlogits, n * NN_POLICY_SIZE);
    TAKE(p->dvalue, n);
    TAKE(p->dvh, n * a->value_hidden);
    TAKE(p->dpy, n * a->policy_channels * NN_HW);
    TAKE(p->dvy, n * a->value_channels * NN_HW);
    if (a->survival) {
      TAKE(p->surv, n * NN_HW);
      TAKE(p->dsurv, n * NN_HW);
    }
    if (a->reply) {
      TAKE(p->reply, n * 2 * NN_HW);
      TAKE(p->dreply, n * 2 * NN_HW);
    }
    TAKE(p->dA, tower);
    TAKE(p->dB, tower);
    TAKE(p->dskip, tower);
  } else {
    TAKE(p->act[0], tower);
    TAKE(p->act[1], tower);
    if (nn_plan_resident_tower(a)) { /* one chunk of images at a time */
      int nc = p->max_n < nn_conv3x3_resident_chunk() ? p->max_n : nn_conv3x3_resident_chunk();
      TAKE(p->res_in, nn_conv3x3_resident_floats(nc, nn_arch_input_planes(a)));
      TAKE(p->res[0], nn_conv3x3_resident_floats(nc, a->channels));
      TAKE(p->res[1], nn_conv3x3_resident_floats(nc, a->channels));
    }
  }
  TAKE(p->py, n * a->policy_channels * NN_HW);
  TAKE(p->pmean, a->policy_channels);
  TAKE(p->pvar, a->policy_channels);
  TAKE(p->logits, n * NN_POLICY_SIZE);
  TAKE(p->vy, n * a->value_channels * NN_HW);
  TAKE(p->vmean, a->value_channels);
  TAKE(p->vvar, a->value_channels);
  TAKE(p->vh, n * a->value_hidden);
  TAKE(p->value, n);
#undef TAKE
  return off;
}

int nn_plan_new(nn_plan_t **out, const nn_arch_t *arch, int max_n, bool training,
                xq_errbuf_t *eb) {
  *out = NULL;
  int rc = nn_arch_validate(arch, eb);
  if (rc) return rc;
  if (max_n < 1 || max_n > 65536)
    return xq_err_set(eb, XQ_ERANGE, "batch size %d out of range 1..65536", max_n);
  nn_plan_t *p = calloc(1, sizeof *p);
  if (!p) return xq_err_set(eb, XQ_ENOMEM, "cannot allocate a plan");
  p->arch = *arch;
  p->max_n = max_n;
  p->training = training;
  p->mem_floats = layout(p, NULL);
  p->mem = aligned_alloc(64, p->mem_floats * sizeof(float));
  if (!p->mem) {
    size_t mb = p->mem_floats * sizeof(float) >> 20;
    free(p);
    return xq_err_set(eb, XQ_ENOMEM, "cannot allocate %zu MB of activations", mb);
  }
  memset(p->mem, 0, p->mem_floats * sizeof(float));
  layout(p, p->mem);
  *out = p;
  return 0;
}

void nn_plan_free(nn_plan_t **pp) {
  if (!pp || !*pp) return;
  free((*pp)->mem);
  free(*pp);
  *pp = NULL;
}
