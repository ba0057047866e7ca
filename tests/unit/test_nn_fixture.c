/*
 * test_nn_fixture.c: xqzero's network against PyTorch. tests/fixtures/nn_tiny_ref.bin is
 * written by scripts/gen_nn_fixture.py (PyTorch in float64, same weights as
 * `xqz net init --size tiny --seed 1 --id 1`): training-mode logits and values, the loss
 * terms, every parameter gradient, BN running statistics after the step, and eval-mode
 * outputs. Our float32 numbers must match within 1e-4 relative, with an absolute floor
 * of 1e-4 of the tensor's largest magnitude (float32 rounding of near-zero entries).
 * tests/fixtures/nn_tiny_gpool_ref.bin is the same for tiny-g (global pooling in both
 * blocks), whose pooling weights the fixture gives ("param.<name>" records),
 * tests/fixtures/nn_tiny_lines_ref.bin for tiny-l (rank and file convolutions in both
 * blocks, their weights given the same way), and tests/fixtures/nn_tiny_surv_ref.bin for
 * tiny-s (the survival head: its targets, its training and eval-mode logits, the folded
 * probabilities and its loss term), tests/fixtures/nn_tiny_reply_ref.bin for tiny-sr (the
 * survival and opponent-reply heads together: the reply's from and to squares, its
 * training and eval-mode logits and its loss term after the survival's).
 * tests/fixtures/nn_tiny_attacks_ref.bin is for tiny-a
 * (the attack planes: 20 input planes, planes 18 and 19 random 0/1 squares, read by the
 * stem); every buffer of planes strides by the net's own nn_arch_input_planes.
 * tests/fixtures/nn_tiny_value_ref.bin is for tiny-v (the wide value head: four value
 * channels into value.fc1).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "nn/nn_forward.h"
#include "nn/nn_optim.h"
#include "nn_test_util.h"
#include "support/atomic_file.h"
#include "support/crc32.h"

typedef struct {
  char name[48];
  uint32_t n;
  const float *v;
} rec_t;

static rec_t recs[128];
static int nrecs;
static unsigned char *img;

static const rec_t *find(const char *name) {
  for (int i = 0; i < nrecs; i++)
    if (!strcmp(recs[i].name, name)) return &recs[i];
  return NULL;
}

static const rec_t *get(const char *name) {
  const rec_t *r = find(name);
  if (!r) fail_msg("fixture has no record '%s'", name);
  return r;
}

static void free_fixture(void) {
  for (int i = 0; i < nrecs; i++) free((void *)recs[i].v);
  free(img);
  img = NULL;
  nrecs = 0;
}

/* Reads tests/fixtures/<file> into recs (replacing the one read before). */
static int load_fixture(const char *file) {
  free_fixture();
  size_t len;
  xq_errbuf_t eb = {{0}};
  char path[512];
  snprintf(path, sizeof path, "%s/tests/fixtures/%s", XQZ_SOURCE_DIR, file);
  if (xq_read_file(path, 1 << 24, &img, &len, &eb)) {
    fprintf(stderr, "%s\n", eb.msg);
    return -1;
  }
  if (len < 8 || memcmp(img, "XQZFIX1", 8)) return -1;
  size_t off = 8;
  while (off < len && nrecs < 128) {
    uint32_t nl, n;
    if (off + 4 > len) return -1;
    memcpy(&nl, img + off, 4);
    off += 4;
    if (nl >= sizeof recs[0].name || off + nl + 4 > len) return -1;
    memcpy(recs[nrecs].name, img + off, nl);
    recs[nrecs].name[nl] = 0;
    off += nl;
    memcpy(&n, img + off, 4);
    off += 4;
    if (n > (len - off) / 4) return -1;
    recs[nrecs].n = n;
    /* Names make records unaligned: copy the values into an aligned buffer. */
    float *v = malloc((size_t)n * 4 + 4);
    if (!v) return -1;
    memcpy(v, img + off, (size_t)n * 4);
    recs[nrecs].v = v;
    off += (size_t)n * 4;
    nrecs++;
  }
  return 0;
}

static int teardown(void **state) {
  (void)state;
  free_fixture();
  return 0;
}

/* Compares ours[i * stride] with ref[i]; fails naming the tensor and the worst entry. */
static void compare(const char *what, const float *ours, size_t stride, const rec_t *ref) {
  double amax = 0;
  for (uint32_t i = 0; i < ref->n; i++) amax = fmax(amax, fabs(ref->v[i]));
  double floor = 1e-4 * amax + 1e-7, worst = 0;
  uint32_t at = 0;
  for (uint32_t i = 0; i < ref->n; i++) {
    double d = fabs((double)ours[i * stride] - ref->v[i]);
    double excess = d / (1e-4 * fabs(ref->v[i]) + floor);
    if (excess > worst) worst = excess, at = i;
  }
  if (worst > 1.0)
    fail_msg("%s: entry %u is %.8g, PyTorch says %.8g (beyond 1e-4 rel + %.3g abs)", what, at,
             (double)ours[at * stride], (double)ref->v[at], floor);
}

static void against_pytorch(const char *file, const char *size) {
  if (load_fixture(file)) fail_msg("cannot read the fixture %s", file);
  const rec_t *cfg = get("config");
  int n = (int)cfg->v[0], targets = (int)cfg->v[2], stride = (int)cfg->v[6];
  uint32_t want_crc = (uint32_t)cfg->v[7] | (uint32_t)cfg->v[8] << 16;
  nn_arch_t a;
  nn_model_t *m;
  assert_int_equal(nn_arch_preset(size, &a), 0);
  assert_int_equal(nn_model_new(&m, &a, NULL), 0);
  nn_model_init(m, 1); /* what `xqz net init --size SIZE --seed 1` writes */
  uint32_t crc = xq_crc32(0, m->params, m->nparams * 4);
  crc = xq_crc32(crc, m->stats, m->nstats * 4);
  if (crc != want_crc)
    fail_msg("nn_model_init(seed 1) no longer gives the fixture's weights (crc %08x, fixture "
             "%08x): regenerate with scripts/gen_nn_fixture.py (docs/network.md)", crc, want_crc);
  /* Parameters the reference set itself (the pooling and line weights, which start at
   * zero). */
  int given = 0;
  for (int t = 0; t < m->ntensors; t++) {
    char name[64];
    snprintf(name, sizeof name, "param.%s", m->table[t].name);
    const rec_t *r = find(name);
    if (!r) continue;
    assert_int_equal(r->n, m->table[t].size);
    memcpy(m->params + m->table[t].offset, r->v, r->n * 4);
    given++;
  }
  int zero_started = a.lines ? 2 * a.blocks : 0; /* rank and file weights per block */
  for (int b = 0; b < a.blocks; b++) zero_started += nn_arch_pools(&a, b);
  assert_int_equal(given, zero_started);
  /* inputs */
  const rec_t *pl = get("planes"), *mk = get("mask"), *pi = get("pi_index"), *pp = get("pi_prob");
  assert_int_equal(pl->n, (uint32_t)n * nn_arch_input_planes(&m->arch) * NN_HW);
  uint8_t *mask = malloc((size_t)n * NN_POLICY_SIZE);
  for (size_t i = 0; i < (size_t)n * NN_POLICY_SIZE; i++) mask[i] = mk->v[i] != 0.0f;
  nn_pi_entry_t *ent = malloc((size_t)n * targets * sizeof *ent);
  int32_t *off = malloc(((size_t)n + 1) * sizeof *off);
  for (int s = 0; s <= n; s++) off[s] = s * targets;
  for (int i = 0; i < n * targets; i++) ent[i] = (nn_pi_entry_t){(int32_t)pi->v[i], pp->v[i]};
  nn_batch_t b = {n, pl->v, mask, off, ent, get("z")->v, NULL, NULL, NULL};
  /* config: 9 numbers, then ws for a survival net, then wr for a reply net */
  assert_int_equal(cfg->n, 9 + a.survival + a.reply);
  /* The whole policy FC: the fixture compares every logit (test_nn_train_legal holds the
   * legal-moves-only step to this one). */
  nn_loss_cfg_t lc = {cfg->v[3], cfg->v[4], cfg->v[5], a.survival ? cfg->v[9] : 0.0f,
                      a.reply ? cfg->v[9 + a.survival] : 0.0f, false};
  int16_t *reply = NULL;
  if (a.reply) { /* from and to squares per sample, -1 = none */
    const rec_t *rs = get("reply_sq");
    assert_int_equal(rs->n, (uint32_t)n * 2);
    reply = malloc((size_t)n * 2 * sizeof *reply);
    for (int i = 0; i < 2 * n; i++) reply[i] = (int16_t)rs->v[i];
    b.reply = reply;
  } else {
    assert_null(find("reply_logits"));
  }
  uint8_t *smask = NULL, *starget = NULL;
  if (a.survival) {
    const rec_t *sm = get("surv_mask"), *st = get("surv_target");
    assert_int_equal(sm->n, (uint32_t)n * NN_HW);
    assert_int_equal(st->n, (uint32_t)n * NN_HW);
    smask = malloc((size_t)n * NN_HW);
    starget = malloc((size_t)n * NN_HW);
    for (size_t i = 0; i < (size_t)n * NN_HW; i++) {
      smask[i] = sm->v[i] != 0.0f;
      starget[i] = st->v[i] != 0.0f;
    }
    b.surv_mask = smask;
    b.surv_target = starget;
  } else {
    assert_null(find("surv_logits"));
  }
  nn_plan_t *p;
  assert_int_equal(nn_plan_new(&p, &a, n, true, NULL), 0);
  nn_loss_t loss;
  nn_compute_gradients(m, p, &b, &lc, &loss);
  /* nn_backward consumed dlogits; the logits and values are still in the plan. */
  compare("logits", p->logits, 1, get("logits"));
  compare("value", p->value, 1, get("value"));
  float lv[6] = {(float)loss.total, (float)loss.policy, (float)loss.value, (float)loss.l2};
  int nl = 4;
  if (a.survival) lv[nl++] = (float)loss.survival;
  if (a.reply) lv[nl++] = (float)loss.reply;
  const rec_t *lr = get("loss");
  assert_int_equal(lr->n, (uint32_t)nl);
  compare("loss (total, policy, value, l2[, survival][, reply])", lv, 1, lr);
  if (a.survival) compare("survival logits", p->surv, 1, get("surv_logits"));
  if (a.reply) compare("reply logits", p->reply, 1, get("reply_logits"));
  for (int t = 0; t < m->ntensors; t++) {
    const nn_param_info_t *ti = &m->table[t];
    char name[64];
    snprintf(name, sizeof name, "grad.%s", ti->name);
    const rec_t *r = get(name);
    size_t st = strcmp(ti->name, "policy.fc.w") ? 1 : (size_t)stride;
    assert_int_equal(r->n, (ti->size + st - 1) / st);
    compare(name, m->grads + ti->offset, st, r);
  }
  compare("running_stats", m->stats, 1, get("running_stats"));
  /* Eval mode with the updated statistics: unfolded and folded. */
  nn_forward(p, m, b.planes, n, false);
  compare("eval logits (unfolded)", p->logits, 1, get("eval_logits"));
  compare("eval value (unfolded)", p->value, 1, get("eval_value"));
  if (a.survival) compare("eval survival logits (unfolded)", p->surv, 1, get("eval_surv_logits"));
  if (a.reply) compare("eval reply logits (unfolded)", p->reply, 1, get("eval_reply_logits"));
  nn_model_fold(m);
  nn_plan_t *ip;
  assert_int_equal(nn_plan_new(&ip, &a, n, false, NULL), 0);
  float val[16];
  nn_infer(NULL, val, ip, m, b.planes, mask, n);
  compare("eval logits (folded)", ip->logits, 1, get("eval_logits"));
  compare("eval value (folded)", val, 1, get("eval_value"));
  if (a.survival) {
    float surv[16 * NN_HW];
    assert_true(n <= 16);
    nn_infer_survival(surv, ip, m, n);
    compare("eval survival (folded)", surv, 1, get("eval_surv"));
  }
  nn_plan_free(&ip);
  nn_plan_free(&p);
  nn_model_free(&m);
  free(mask), free(ent), free(off), free(smask), free(starget), free(reply);
}

/* Also the proof that a net without pooling computes what it did before pooling existed:
 * this fixture, unchanged, predates it. */
static void test_against_pytorch(void **state) {
  (void)state;
  against_pytorch("nn_tiny_ref.bin", "tiny");
}

static void test_gpool_against_pytorch(void **state) {
  (void)state;
  against_pytorch("nn_tiny_gpool_ref.bin", "tiny-g");
}

static void test_lines_against_pytorch(void **state) {
  (void)state;
  against_pytorch("nn_tiny_lines_ref.bin", "tiny-l");
}

static void test_survival_against_pytorch(void **state) {
  (void)state;
  against_pytorch("nn_tiny_surv_ref.bin", "tiny-s");
}

/* Both auxiliary heads at once: their losses add in the order the fixture records. */
static void test_reply_against_pytorch(void **state) {
  (void)state;
  against_pytorch("nn_tiny_reply_ref.bin", "tiny-sr");
}

static void test_attacks_against_pytorch(void **state) {
  (void)state;
  against_pytorch("nn_tiny_attacks_ref.bin", "tiny-a");
}

/* The wide value head: four value channels instead of one. */
static void test_wide_value_against_pytorch(void **state) {
  (void)state;
  against_pytorch("nn_tiny_value_ref.bin", "tiny-v");
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_against_pytorch),
                                     cmocka_unit_test(test_gpool_against_pytorch),
                                     cmocka_unit_test(test_lines_against_pytorch),
                                     cmocka_unit_test(test_survival_against_pytorch),
                                     cmocka_unit_test(test_reply_against_pytorch),
                                     cmocka_unit_test(test_attacks_against_pytorch),
                                     cmocka_unit_test(test_wide_value_against_pytorch)};
  return cmocka_run_group_tests(tests, NULL, teardown);
}
