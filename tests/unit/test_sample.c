/*
 * test_sample.c: compact training samples: made from game records of real random games
 * (their planes equal nn_encode of the replayed position), inconsistent records rejected
 * with reasons, mirror, the wire round trip and hostile wire samples; the survival target
 * on a hand-made game, on random games, through mirror, colour swap and the wire.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "nn/encode.h"
#include "rules/fen.h"
#include "rules/material.h"
#include "rules/movegen.h"
#include "rules/policy_index.h"
#include "rules/rules.h"
#include "test_helpers.h"
#include "records/targets.h"
#include "wire/sample.h"

#define CAP 1100

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return (uint32_t)(rng_state >> 11);
}

/* Records one ply of pos: every legal move's index gets random visits (full plies). */
static void add_ply(xq_game_record_t *r, xq_pos_t *pos, xq_move_t m, bool full) {
  xq_visit_t vis[XQ_MAX_MOVES];
  int idx[XQ_MAX_MOVES];
  int n = nn_encode_legal(pos, NULL, idx, NULL);
  int nv = 0;
  for (int i = 0; i < n && full; i++)
    if (rnd() % 3 == 0 || xq_policy_index_for(m, pos->side) == idx[i]) {
      vis[nv].index = (uint16_t)idx[i];
      vis[nv++].count = 1 + rnd() % 50;
    }
  assert_int_equal(xq_record_add(r, m, full, 0.0f, vis, nv), 0);
}

/* A random game from the start position, to its end by the rules or max_plies (then a
 * length-capped draw). */
static void random_game(xq_game_record_t *r, int max_plies) {
  xq_pos_t *pos = malloc(sizeof *pos);
  xq_pos_startpos(pos);
  xq_record_reset(r, XQ_START_FEN, 7);
  for (;;) {
    xq_outcome_t o = xq_adjudicate(pos, 0);
    if (o.result != XQ_RESULT_NONE) {
      r->result = o.result;
      r->reason = o.reason;
      break;
    }
    if (pos->ply >= max_plies) {
      r->result = XQ_RESULT_DRAW;
      r->reason = XQ_REASON_LENGTH_CAP;
      break;
    }
    xq_move_t mv[XQ_MAX_MOVES];
    int n = xq_gen_legal(pos, mv);
    xq_move_t m = mv[rnd() % (uint32_t)n];
    add_ply(r, pos, m, rnd() % 4 != 0);
    xq_pos_make(pos, m);
  }
  free(pos);
}

/* A game that repeats the start position three times (rook shuffles): draw. */
static void repetition_game(xq_game_record_t *r) {
  xq_pos_t *pos = malloc(sizeof *pos);
  xq_pos_startpos(pos);
  xq_record_reset(r, XQ_START_FEN, 7);
  const char *mv[] = {"a0a1", "a9a8", "a1a0", "a8a9", "a0a1", "a9a8", "a1a0", "a8a9"};
  for (int i = 0; i < 8; i++) {
    xq_move_t m;
    assert_int_equal(xq_move_parse_legal(pos, mv[i], &m, NULL), 0);
    add_ply(r, pos, m, true);
    xq_pos_make(pos, m);
  }
  xq_outcome_t o = xq_adjudicate(pos, 0);
  assert_int_equal(o.reason, XQ_REASON_REPETITION);
  r->result = o.result;
  r->reason = o.reason;
  free(pos);
}

/* Replays r and checks every sample against nn_encode of the replayed position. */
static void check_samples(const xq_game_record_t *r, const xq_sample_t *s, int ns) {
  xq_pos_t *pos = malloc(sizeof *pos);
  static float a[NN_INPUT_PLANES_MAX * NN_HW], b[NN_INPUT_PLANES_MAX * NN_HW];
  assert_int_equal(xq_fen_parse(pos, r->start_fen, NULL), 0);
  int k = 0;
  for (int i = 0; i < r->nplies; i++) {
    const xq_record_ply_t *pl = &r->plies[i];
    if (pl->full) {
      assert_true(k < ns);
      nn_encode(a, pos, NN_INPUT_PLANES_MAX); /* with the attack planes */
      xq_sample_encode(b, &s[k], NN_INPUT_PLANES_MAX);
      assert_memory_equal(a, b, sizeof a);
      assert_int_equal(s[k].side, pos->side);
      assert_int_equal(s[k].npi, pl->nvisits);
      double sum = 0;
      for (int j = 0; j < s[k].npi; j++) sum += s[k].pi_prob[j];
      assert_true(fabs(sum - 1.0) < 1e-5);
      float z = r->result == XQ_RESULT_DRAW ? 0.0f
                : (r->result == XQ_RESULT_RED_WIN) == (pos->side == XQ_RED) ? 1.0f : -1.0f;
      assert_true(s[k].z == z);
      /* The reply: the next ply's move, none after the last. */
      assert_int_equal(s[k].has_reply, i + 1 < r->nplies);
      if (s[k].has_reply) {
        assert_int_equal(s[k].reply_from, xq_mv_from(r->plies[i + 1].move));
        assert_int_equal(s[k].reply_to, xq_mv_to(r->plies[i + 1].move));
      }
      k++;
    }
    xq_pos_make(pos, pl->move);
  }
  assert_int_equal(k, ns);
  free(pos);
}

static void test_random_games(void **state) {
  (void)state;
  xq_game_record_t r;
  xq_record_init(&r);
  xq_sample_t *s = malloc(CAP * sizeof *s);
  int decisive = 0;
  for (int g = 0; g < 30; g++) {
    random_game(&r, 300);
    xq_errbuf_t eb = {{0}};
    int n = xq_samples_from_record(&r, s, CAP, &eb);
    if (n < 0) fail_msg("game %d rejected: %s", g, eb.msg);
    check_samples(&r, s, n);
    if (r.result != XQ_RESULT_DRAW) decisive++;
    /* Through the binary format and back: same samples. */
    unsigned char *buf;
    size_t len;
    assert_int_equal(xq_record_encode(&r, &buf, &len), 0);
    xq_game_record_t r2;
    xq_record_init(&r2);
    assert_int_equal(xq_record_decode(&r2, buf, len, &eb), 0);
    xq_sample_t *s2 = malloc(CAP * sizeof *s2);
    assert_int_equal(xq_samples_from_record(&r2, s2, CAP, &eb), n);
    for (int k = 0; k < n; k++) {
      assert_memory_equal(s[k].board, s2[k].board, XQ_SQUARES);
      assert_memory_equal(s[k].pi_prob, s2[k].pi_prob, (size_t)s[k].npi * sizeof(float));
    }
    /* A smaller cap: the first cap samples, same count returned. */
    if (n > 2) assert_int_equal(xq_samples_from_record(&r2, s2, 2, &eb), 2);
    free(s2);
    free(buf);
    xq_record_free(&r2);
  }
  print_message("%d of 30 random games decisive\n", decisive);
  free(s);
  xq_record_free(&r);
}

static void test_repetition(void **state) {
  (void)state;
  xq_game_record_t r;
  xq_record_init(&r);
  xq_sample_t *s = malloc(CAP * sizeof *s);
  repetition_game(&r);
  xq_errbuf_t eb = {{0}};
  int n = xq_samples_from_record(&r, s, CAP, &eb);
  assert_int_equal(n, 8);
  check_samples(&r, s, n);
  assert_false(s[0].repeated);
  assert_false(s[3].repeated);
  assert_true(s[4].repeated); /* the start position again */
  assert_true(s[7].repeated);
  /* Claimed as a win: rejected. */
  r.result = XQ_RESULT_RED_WIN;
  assert_true(xq_samples_from_record(&r, s, CAP, &eb) < 0);
  assert_non_null(strstr(eb.msg, "rules give"));
  free(s);
  xq_record_free(&r);
}

/* Each sample carries its ply's root value as q; a hostile value is clamped to [-1, 1]
 * and a NaN becomes 0. */
static void test_root_value(void **state) {
  (void)state;
  xq_game_record_t r;
  xq_record_init(&r);
  xq_sample_t *s = malloc(CAP * sizeof *s);
  random_game(&r, 120);
  const float v[4] = {0.25f, 3.0f, -7.0f, NAN};
  const float want[4] = {0.25f, 1.0f, -1.0f, 0.0f};
  int k = 0;
  for (int i = 0; i < r.nplies; i++)
    if (r.plies[i].full) r.plies[i].value = v[k++ % 4];
  xq_errbuf_t eb = {{0}};
  int n = xq_samples_from_record(&r, s, CAP, &eb);
  assert_int_equal(n, k);
  for (int j = 0; j < n; j++) assert_true(s[j].q == want[j % 4]);
  free(s);
  xq_record_free(&r);
}

static void test_rejects(void **state) {
  (void)state;
  xq_game_record_t r;
  xq_record_init(&r);
  xq_sample_t *s = malloc(CAP * sizeof *s);
  xq_errbuf_t eb = {{0}};
  rng_state = 12345;
  random_game(&r, 60); /* capped at 60 plies: a draw by the length cap */
  assert_int_equal(r.reason, XQ_REASON_LENGTH_CAP);
  assert_true(xq_samples_from_record(&r, s, CAP, &eb) > 0);

  /* Wrong result for a capped game. */
  r.result = XQ_RESULT_BLACK_WIN;
  assert_int_equal(xq_samples_from_record(&r, s, CAP, &eb), XQ_EFORMAT);
  assert_non_null(strstr(eb.msg, "length cap"));
  /* Resignation: Red is to move after 60 plies; Red resigning is a Black win. */
  r.reason = XQ_REASON_RESIGN;
  assert_true(xq_samples_from_record(&r, s, CAP, &eb) > 0);
  assert_true(s[0].z == -1.0f || s[0].z == 1.0f);
  r.result = XQ_RESULT_RED_WIN;
  assert_int_equal(xq_samples_from_record(&r, s, CAP, &eb), XQ_EFORMAT);
  assert_non_null(strstr(eb.msg, "resignation"));
  /* Checkmate claimed in a game that goes on. */
  r.reason = XQ_REASON_CHECKMATE;
  assert_int_equal(xq_samples_from_record(&r, s, CAP, &eb), XQ_EFORMAT);
  /* No result at all. */
  r.result = XQ_RESULT_NONE;
  assert_int_equal(xq_samples_from_record(&r, s, CAP, &eb), XQ_EFORMAT);
  r.result = XQ_RESULT_DRAW;
  r.reason = XQ_REASON_LENGTH_CAP;
  assert_true(xq_samples_from_record(&r, s, CAP, &eb) > 0);

  /* An illegal move (a rook jumping across the board). */
  xq_move_t saved = r.plies[0].move;
  r.plies[0].move = xq_mv_make(xq_sq(0, 0), xq_sq(0, 9));
  assert_int_equal(xq_samples_from_record(&r, s, CAP, &eb), XQ_EMOVE);
  assert_non_null(strstr(eb.msg, "illegal"));
  r.plies[0].move = saved;

  /* Visits on an illegal move: the first full ply gets an index no legal move has. */
  int f = 0;
  while (!r.plies[f].full) f++;
  xq_pos_t *pos = malloc(sizeof *pos);
  xq_pos_startpos(pos);
  for (int i = 0; i < f; i++) xq_pos_make(pos, r.plies[i].move);
  uint8_t mask[XQ_POLICY_SIZE];
  nn_encode_legal(pos, mask, NULL, NULL);
  int bad = 0;
  while (mask[bad]) bad++;
  xq_visit_t *v = &r.visits[r.plies[f].visit_off];
  uint16_t old = v->index;
  v->index = (uint16_t)bad;
  assert_int_equal(xq_samples_from_record(&r, s, CAP, &eb), XQ_EFORMAT);
  assert_non_null(strstr(eb.msg, "not a legal move"));
  v->index = XQ_POLICY_SIZE + 5;
  assert_int_equal(xq_samples_from_record(&r, s, CAP, &eb), XQ_EFORMAT);
  v->index = old;
  assert_true(xq_samples_from_record(&r, s, CAP, &eb) > 0);
  free(pos);
  free(s);
  xq_record_free(&r);
}

/* The samples of a random game of up to `plies` plies (r initialised here; free both). */
static xq_sample_t *random_samples(xq_game_record_t *r, int plies, int *n) {
  xq_record_init(r);
  xq_sample_t *s = malloc(CAP * sizeof *s);
  random_game(r, plies);
  *n = xq_samples_from_record(r, s, CAP, NULL);
  assert_true(*n > 0);
  return s;
}

static void test_mirror(void **state) {
  (void)state;
  xq_game_record_t r;
  int n;
  xq_sample_t *s = random_samples(&r, 100, &n);
  xq_pos_t *pos = malloc(sizeof *pos);
  for (int k = 0; k < n; k++) {
    xq_sample_t m = s[k];
    xq_sample_mirror(&m);
    /* The mirrored policy is on the mirrored position's legal moves. */
    xq_sample_position(pos, &m);
    uint8_t mask[XQ_POLICY_SIZE];
    nn_encode_legal(pos, mask, NULL, NULL);
    for (int j = 0; j < m.npi; j++) assert_true(mask[m.pi_index[j]]);
    xq_sample_mirror(&m);
    assert_memory_equal(&m, &s[k], sizeof m);
  }
  free(pos);
  free(s);
  xq_record_free(&r);
}

/* A colour swap is the same position for the mover: every input plane but the colour
 * plane (14) is unchanged, so are the legal moves (policy indices) and the check flag;
 * swapping twice gives the sample back. */
static void test_colour_swap(void **state) {
  (void)state;
  xq_game_record_t r;
  int n;
  xq_sample_t *s = random_samples(&r, 150, &n);
  xq_pos_t *a = malloc(sizeof *a), *b = malloc(sizeof *b);
  static float pa[NN_INPUT_PLANES_MAX * NN_HW], pb[NN_INPUT_PLANES_MAX * NN_HW];
  for (int k = 0; k < n; k++) {
    xq_sample_t c = s[k];
    xq_sample_colour_swap(&c);
    assert_int_not_equal(c.side, s[k].side);
    xq_sample_encode(pa, &s[k], NN_INPUT_PLANES_MAX);
    xq_sample_encode(pb, &c, NN_INPUT_PLANES_MAX);
    for (int p = 0; p < NN_INPUT_PLANES_MAX; p++) { /* the attack planes too */
      if (p == 14) {
        for (int q = 0; q < NN_HW; q++) assert_true(pa[p * NN_HW + q] == 1.0f - pb[p * NN_HW + q]);
      } else {
        assert_memory_equal(pa + p * NN_HW, pb + p * NN_HW, NN_HW * sizeof(float));
      }
    }
    uint8_t ma[XQ_POLICY_SIZE], mb[XQ_POLICY_SIZE];
    xq_sample_position(a, &s[k]);
    xq_sample_position(b, &c);
    nn_encode_legal(a, ma, NULL, NULL);
    nn_encode_legal(b, mb, NULL, NULL);
    assert_memory_equal(ma, mb, sizeof ma);
    assert_int_equal(a->in_check, b->in_check);
    xq_sample_colour_swap(&c);
    assert_memory_equal(&c, &s[k], sizeof c);
  }
  free(a);
  free(b);
  free(s);
  xq_record_free(&r);
}

/* The legal-move mask of xq_sample_position equals that of the replayed position. */
static void test_position_mask(void **state) {
  (void)state;
  xq_game_record_t r;
  xq_record_init(&r);
  xq_sample_t *s = malloc(CAP * sizeof *s);
  random_game(&r, 200);
  int n = xq_samples_from_record(&r, s, CAP, NULL);
  xq_pos_t *a = malloc(sizeof *a), *b = malloc(sizeof *b);
  xq_pos_startpos(a);
  int k = 0;
  for (int i = 0; i < r.nplies && k < n; i++) {
    if (r.plies[i].full) {
      uint8_t ma[XQ_POLICY_SIZE], mb[XQ_POLICY_SIZE];
      nn_encode_legal(a, ma, NULL, NULL);
      xq_sample_position(b, &s[k]);
      nn_encode_legal(b, mb, NULL, NULL);
      assert_memory_equal(ma, mb, sizeof ma);
      assert_int_equal(a->in_check, b->in_check);
      k++;
    }
    xq_pos_make(a, r.plies[i].move);
  }
  free(a);
  free(b);
  free(s);
  xq_record_free(&r);
}

/* Whether two positions are the same in every field a set-up gives (no history). */
static bool same_position(const xq_pos_t *a, const xq_pos_t *b) {
  return !memcmp(a->board, b->board, sizeof a->board) && !memcmp(a->count, b->count, sizeof a->count) &&
         !memcmp(a->king, b->king, sizeof a->king) && a->side == b->side &&
         a->in_check == b->in_check && a->rule60 == b->rule60 && a->fullmove == b->fullmove &&
         a->ply == b->ply && a->key == b->key;
}

/* The way samples were turned into positions before (issue 50): the board printed as FEN
 * and parsed back, so the rules' FEN checks applied. */
static int position_through_fen(xq_pos_t *pos, const uint8_t *board, int side, int rule60,
                                xq_errbuf_t *eb) {
  char fen[XQ_FEN_MAX];
  xq_pos_clear(pos);
  for (int sq = 0; sq < XQ_SQUARES; sq++)
    if (board[sq]) xq_pos_put(pos, sq, board[sq]);
  pos->rule60 = (uint16_t)rule60;
  xq_fen_print(pos, fen);
  char *w = strchr(fen, ' ');
  if (w && side == XQ_BLACK) w[1] = 'b';
  return xq_fen_parse(pos, fen, eb);
}

/* Samples are set up square by square, without FEN text: on the positions of random games
 * (as they are, mirrored, colour-swapped) and on boards spoiled at random (kings missing or
 * doubled, pieces where they can never stand, the mover able to take the king), the
 * position, the verdict and its reason, the legal-move mask and the input planes are those
 * of the FEN round trip. */
static void test_position_without_text(void **state) {
  (void)state;
  xq_game_record_t r;
  int n;
  xq_sample_t *s = random_samples(&r, 150, &n);
  xq_pos_t *a = malloc(sizeof *a), *b = malloc(sizeof *b);
  static float pa[NN_INPUT_PLANES_MAX * NN_HW], pb[NN_INPUT_PLANES_MAX * NN_HW];
  int valid = 0, invalid = 0;
  for (int k = 0; k < n; k++) {
    for (int v = 0; v < 8; v++) {
      xq_sample_t c = s[k];
      if (v & 1) xq_sample_mirror(&c);
      if (v & 2) xq_sample_colour_swap(&c);
      if (v & 4) /* up to three squares get a random piece (or none) */
        for (int j = (int)(rnd() % 3); j >= 0; j--) {
          int t = (int)(rnd() % 22) - 8; /* empty, or one of the 14 piece codes */
          c.board[rnd() % XQ_SQUARES] = (uint8_t)(t < 0 ? 0 : t < 7 ? t + 1 : t + 2);
        }
      xq_errbuf_t ea = {{0}}, eb = {{0}};
      int ra = position_through_fen(a, c.board, c.side, c.rule60, &ea);
      int rb = xq_sample_board_position(b, c.board, c.side, c.rule60, &eb);
      assert_int_equal(ra, rb);
      assert_string_equal(ea.msg, eb.msg);
      assert_true(same_position(a, b));
      if (ra) {
        invalid++;
        continue;
      }
      valid++;
      uint8_t ma[XQ_POLICY_SIZE], mb[XQ_POLICY_SIZE];
      nn_encode_legal(a, ma, NULL, NULL);
      nn_encode_legal(b, mb, NULL, NULL);
      assert_memory_equal(ma, mb, sizeof ma);
      nn_encode(pa, a, NN_INPUT_PLANES_MAX);
      nn_encode(pb, b, NN_INPUT_PLANES_MAX);
      assert_memory_equal(pa, pb, sizeof pa);
    }
  }
  print_message("%d valid and %d spoiled positions agree\n", valid, invalid);
  assert_true(valid > n && invalid > 0);
  free(a);
  free(b);
  free(s);
  xq_record_free(&r);
}

static void test_proto_roundtrip(void **state) {
  (void)state;
  xq_game_record_t r;
  xq_record_init(&r);
  xq_sample_t *s = malloc(CAP * sizeof *s);
  xq_pos_t *pos = malloc(sizeof *pos), *want = malloc(sizeof *want);
  random_game(&r, 150);
  int n = xq_samples_from_record(&r, s, CAP, NULL);
  assert_true(n > 0);
  for (int k = 0; k < n; k++) {
    Xqz__Sample msg;
    uint32_t idx[XQ_MAX_MOVES];
    float prob[XQ_MAX_MOVES];
    xq_sample_to_proto(&msg, &s[k], idx, prob);
    size_t len = xqz__sample__get_packed_size(&msg);
    uint8_t *buf = malloc(len);
    xqz__sample__pack(&msg, buf);
    Xqz__Sample *u = xqz__sample__unpack(NULL, len, buf);
    assert_non_null(u);
    xq_sample_t t;
    xq_errbuf_t eb = {{0}};
    if (xq_sample_from_proto(&t, pos, u, &eb)) fail_msg("round trip rejected: %s", eb.msg);
    /* The position from_proto leaves is the sample's, as xq_sample_position sets it. */
    xq_sample_position(want, &s[k]);
    assert_true(same_position(pos, want));
    assert_memory_equal(t.board, s[k].board, XQ_SQUARES);
    assert_int_equal(t.side, s[k].side);
    assert_int_equal(t.rule60, s[k].rule60);
    assert_int_equal(t.repeated, s[k].repeated);
    assert_int_equal(t.npi, s[k].npi);
    assert_memory_equal(t.pi_index, s[k].pi_index, (size_t)t.npi * sizeof t.pi_index[0]);
    assert_memory_equal(t.pi_prob, s[k].pi_prob, (size_t)t.npi * sizeof t.pi_prob[0]);
    assert_true(t.z == s[k].z);
    assert_true(t.has_survive && s[k].has_survive);
    assert_memory_equal(t.survive, s[k].survive, XQ_SURVIVE_BYTES);
    assert_int_equal(t.has_reply, s[k].has_reply);
    assert_int_equal(t.reply_from, s[k].reply_from);
    assert_int_equal(t.reply_to, s[k].reply_to);
    xqz__sample__free_unpacked(u, NULL);
    free(buf);
  }
  /* A Sample without the field (an older coordinator's): no survival target. */
  Xqz__Sample msg;
  uint32_t idx[XQ_MAX_MOVES];
  float prob[XQ_MAX_MOVES];
  s[0].has_survive = false;
  s[0].has_reply = false;
  xq_sample_to_proto(&msg, &s[0], idx, prob);
  assert_int_equal(msg.survive.len, 0);
  assert_int_equal(msg.reply, 0);
  xq_sample_t t;
  memset(&t, 0xff, sizeof t);
  assert_int_equal(xq_sample_from_proto(&t, pos, &msg, NULL), 0);
  assert_false(t.has_survive);
  assert_false(t.has_reply);
  free(pos);
  free(want);
  free(s);
  xq_record_free(&r);
}

/* Applies one corruption to a valid start-position sample and expects a rejection. */
static void expect_reject(int which, const char *what) {
  xq_pos_t pos;
  xq_pos_startpos(&pos);
  xq_sample_t s;
  memset(&s, 0, sizeof s);
  memcpy(s.board, pos.board, XQ_SQUARES);
  s.npi = 2;
  s.pi_index[0] = (uint16_t)xq_policy_index_for(xq_mv_make(xq_sq(7, 2), xq_sq(4, 2)), XQ_RED);
  s.pi_index[1] = (uint16_t)xq_policy_index_for(xq_mv_make(xq_sq(1, 2), xq_sq(4, 2)), XQ_RED);
  s.pi_prob[0] = 0.25f;
  s.pi_prob[1] = 0.75f;
  s.has_survive = true;
  for (int sq = 0; sq < XQ_SQUARES; sq++) xq_sample_set_survives(&s, sq, s.board[sq] && sq % 3);
  uint8_t survive[XQ_SURVIVE_BYTES + 1] = {0};
  memcpy(survive, s.survive, XQ_SURVIVE_BYTES);
  s.has_reply = true; /* Black answers with the horse h9-g7 */
  s.reply_from = (uint8_t)xq_sq(7, 9);
  s.reply_to = (uint8_t)xq_sq(6, 7);
  Xqz__Sample msg;
  uint32_t idx[XQ_MAX_MOVES];
  float prob[XQ_MAX_MOVES];
  uint8_t board[XQ_SQUARES + 1];
  memcpy(board, s.board, XQ_SQUARES);
  xq_sample_to_proto(&msg, &s, idx, prob);
  msg.board.data = board;
  msg.survive.data = survive;
  switch (which) {
    case 0: break; /* valid */
    case 1: msg.board.len = 89; break;
    case 2: board[40] = 8; break;
    case 3: board[40] = 16; break;
    case 4: board[xq_sq(3, 0)] = xq_pc_make(XQ_RED, XQ_KING); break;
    case 5: board[xq_sq(4, 9)] = 0; break;
    case 6: msg.side = 2; break;
    case 7: msg.rule60 = 121; break;
    case 8: idx[1] = XQ_POLICY_SIZE; break;
    case 9: prob[0] = NAN; break;
    case 10: prob[1] = 0.25f; break;
    case 11: msg.z = 1.5f; break;
    case 12: msg.z = NAN; break;
    case 13: msg.n_pi_prob = 1; break;
    case 14: msg.n_pi_index = msg.n_pi_prob = 0; break;
    case 15: board[xq_sq(2, 0)] = 0; board[xq_sq(0, 5)] = xq_pc_make(XQ_RED, XQ_ELEPHANT); break;
    case 16:
      board[xq_sq(0, 9)] = 0;
      board[xq_sq(4, 1)] = xq_pc_make(XQ_BLACK, XQ_ROOK);
      msg.side = XQ_BLACK;
      break;
    case 17: prob[0] = -0.25f; prob[1] = 1.25f; break;
    case 18: msg.n_pi_index = msg.n_pi_prob = XQ_MAX_MOVES + 1; break;
    case 19: msg.survive.len = XQ_SURVIVE_BYTES - 1; break;
    case 20: msg.survive.len = XQ_SURVIVE_BYTES + 1; break;
    case 21: survive[40 / 8] |= 1u << (40 % 8); break; /* e4: empty */
    case 22: survive[XQ_SURVIVE_BYTES - 1] |= 0x80; break; /* bit 95: no square */
    case 23: msg.reply = 1 + 40 * XQ_SQUARES + 49; break;            /* from e4: empty */
    case 24: msg.reply = 1 + xq_sq(1, 2) * XQ_SQUARES + xq_sq(1, 9); break; /* Red's cannon */
    case 25: msg.reply = 1 + xq_sq(7, 9) * XQ_SQUARES + xq_sq(7, 9); break; /* to itself */
    case 26: msg.reply = 1 + XQ_SQUARES * XQ_SQUARES; break;         /* no such squares */
    case 27: msg.reply = UINT32_MAX; break;
  }
  xq_sample_t t;
  xq_errbuf_t eb = {{0}};
  int rc = xq_sample_from_proto(&t, &pos, &msg, &eb);
  if (which == 0) {
    if (rc) fail_msg("valid sample rejected: %s", eb.msg);
    assert_true(t.has_survive);
    assert_memory_equal(t.survive, s.survive, XQ_SURVIVE_BYTES);
    assert_true(t.has_reply && t.reply_from == s.reply_from && t.reply_to == s.reply_to);
    return;
  }
  if (rc != XQ_EFORMAT) fail_msg("%s accepted", what);
  assert_true(eb.msg[0] != 0);
  print_message("%-28s -> %s\n", what, eb.msg);
}

static void test_hostile_proto(void **state) {
  (void)state;
  static const char *what[] = {
      "valid",          "89 squares",       "piece code 8",   "piece code 16",
      "two red kings",  "no black king",    "side 2",         "rule60 121",
      "index 2086",     "NaN probability",  "sum 0.5",        "z 1.5",
      "z NaN",          "count mismatch",   "empty policy",   "unreachable square",
      "mover can take king", "negative prob", "too many entries", "survive 11 bytes",
      "survive 13 bytes", "survive on empty square", "survive past square 89",
      "reply from empty square", "reply by the mover", "reply to itself", "reply 8101",
      "reply 2^32-1"};
  for (int i = 0; i < (int)(sizeof what / sizeof what[0]); i++) expect_reject(i, what[i]);
}

/* With adjudicate_material, a length-capped game's samples get z as if the side that many
 * pawns ahead on the final board had won; other endings and margin 0 keep the rules. */
static void test_material_adjudication(void **state) {
  (void)state;
  xq_sample_t *s = malloc(CAP * sizeof *s);
  xq_pos_t *pos = malloc(sizeof *pos);
  int decisive = 0, drawn = 0;
  for (int g = 0; g < 60; g++) {
    xq_game_record_t r;
    xq_record_init(&r);
    random_game(&r, 100 + g);
    xq_errbuf_t eb = {{0}};
    int n = xq_samples_from_record(&r, s, CAP, &eb);
    assert_true(n > 0);
    float plain[CAP];
    for (int i = 0; i < n; i++) plain[i] = s[i].z;
    /* the final board, replayed here */
    xq_pos_startpos(pos);
    for (int i = 0; i < r.nplies; i++) xq_pos_make(pos, r.plies[i].move);
    const double margin = 3.0;
    xq_result_t want = r.result;
    if (r.reason == XQ_REASON_LENGTH_CAP) {
      int bal = xq_material_balance(pos->board);
      want = bal >= 6 ? XQ_RESULT_RED_WIN : bal <= -6 ? XQ_RESULT_BLACK_WIN : XQ_RESULT_DRAW;
      if (want == XQ_RESULT_DRAW) drawn++;
      else decisive++;
    }
    assert_int_equal(xq_samples_from_record_adjudicated(&r, s, CAP, margin, &eb), n);
    for (int i = 0; i < n; i++) {
      float z = want == XQ_RESULT_DRAW ? 0.0f
                : (want == XQ_RESULT_RED_WIN) == (s[i].side == XQ_RED) ? 1.0f : -1.0f;
      assert_true(s[i].z == z);
    }
    assert_int_equal(xq_samples_from_record_adjudicated(&r, s, CAP, 0.0, &eb), n);
    for (int i = 0; i < n; i++) assert_true(s[i].z == plain[i]);
    xq_record_free(&r);
  }
  print_message("length-capped games: %d scored by material, %d drawn\n", decisive, drawn);
  assert_true(decisive > 0 && drawn > 0);
  free(pos);
  free(s);
}

/* Plays the ICCS moves of a line from the start position into r, every ply full. */
static void line_game(xq_game_record_t *r, const char *const *moves, int n) {
  xq_pos_t *pos = malloc(sizeof *pos);
  xq_pos_startpos(pos);
  xq_record_reset(r, XQ_START_FEN, 7);
  for (int i = 0; i < n; i++) {
    xq_move_t m;
    assert_int_equal(xq_move_parse_legal(pos, moves[i], &m, NULL), 0);
    add_ply(r, pos, m, true);
    xq_pos_make(pos, m);
  }
  r->result = XQ_RESULT_DRAW; /* stopped by the length cap: the end is the final board */
  r->reason = XQ_REASON_LENGTH_CAP;
  free(pos);
}

static int sq_of(const char *name) { return xq_sq(name[0] - 'a', name[1] - '0'); }

/* The survival target of a hand-made game: Red's cannon takes the e6 pawn and is taken by
 * the horse that went to g7. In every sample those two pieces (wherever they stand) are
 * lost and every other piece survives, the horse too, though it moved twice. */
static void test_survival_target(void **state) {
  (void)state;
  static const char *const line[] = {"h2e2", "h9g7", "e2e6", "g7e6"};
  /* The squares of the two lost pieces in the position before each move. */
  static const char *const lost[4][2] = {{"h2", "e6"}, {"e2", "e6"}, {"e2", "e6"}, {"e6", "e6"}};
  xq_game_record_t r;
  xq_record_init(&r);
  line_game(&r, line, 4);
  xq_sample_t *s = malloc(CAP * sizeof *s);
  xq_errbuf_t eb = {{0}};
  int n = xq_samples_from_record(&r, s, CAP, &eb);
  if (n != 4) fail_msg("%d samples: %s", n, eb.msg);
  for (int k = 0; k < 4; k++) {
    assert_true(s[k].has_survive);
    int pieces = 0, kept = 0;
    for (int sq = 0; sq < XQ_SQUARES; sq++) {
      bool want = s[k].board[sq] && sq != sq_of(lost[k][0]) && sq != sq_of(lost[k][1]);
      if (xq_sample_survives(&s[k], sq) != want)
        fail_msg("sample %d square %d: survives %d, expected %d", k, sq,
                 xq_sample_survives(&s[k], sq), want);
      pieces += s[k].board[sq] != 0;
      kept += want;
    }
    assert_int_equal(pieces, k < 3 ? 32 : 31);
    assert_int_equal(kept, 30); /* the final board's pieces */
    for (int sq = 8 * XQ_SURVIVE_BYTES - 1; sq >= XQ_SQUARES; sq--)
      assert_false(xq_sample_survives(&s[k], sq));
    /* As trained: in the planes' frame (Black to move: turned 180 degrees), the kings left
     * out, every other piece in; a trained square is a non-king piece plane's square. */
    uint8_t mask[NN_HW], target[NN_HW];
    static float planes[NN_INPUT_PLANES * NN_HW];
    int trained = xq_sample_survival(mask, target, &s[k]);
    assert_int_equal(trained, pieces - 2);
    xq_sample_encode(planes, &s[k], NN_INPUT_PLANES);
    for (int v = 0; v < NN_HW; v++) {
      float piece = 0;
      for (int p = 1; p < 14; p++)
        if (p != 7) piece += planes[p * NN_HW + v];
      assert_int_equal(mask[v], piece == 1.0f);
      int sq = s[k].side == XQ_RED ? v : xq_sq_flip(v);
      assert_int_equal(target[v], mask[v] && xq_sample_survives(&s[k], sq));
    }
    int lv = s[k].side == XQ_RED ? sq_of(lost[k][0]) : xq_sq_flip(sq_of(lost[k][0]));
    assert_true(mask[lv] && !target[lv]);
    int king = s[k].side == XQ_RED ? sq_of("e0") : xq_sq_flip(sq_of("e0"));
    assert_false(mask[king]);
  }
  /* Mirror and colour swap move each bit with its piece: the cannon on h2 becomes the
   * cannon on b2 (mirror), on b7 as Black's (swap of the mirror), still lost. */
  xq_sample_t m = s[0];
  xq_sample_mirror(&m);
  assert_false(xq_sample_survives(&m, sq_of("b2")));
  assert_true(xq_sample_survives(&m, sq_of("h2")));
  assert_false(xq_sample_survives(&m, sq_of("e6")));
  xq_sample_colour_swap(&m);
  assert_false(xq_sample_survives(&m, sq_of("h7")));
  assert_true(xq_sample_survives(&m, sq_of("b7")));
  assert_false(xq_sample_survives(&m, sq_of("e3")));
  assert_true(xq_sample_survives(&m, sq_of("e6")));
  /* A sample without the target trains nothing. */
  m.has_survive = false;
  uint8_t mask[NN_HW], target[NN_HW];
  assert_int_equal(xq_sample_survival(mask, target, &m), 0);
  for (int v = 0; v < NN_HW; v++) assert_true(mask[v] == 0 && target[v] == 0);
  free(s);
  xq_record_free(&r);
}

/* On random games: every sample's set bits are exactly its pieces that reach the final
 * board, so there are as many as the final board has pieces, all on occupied squares;
 * mirror and colour swap carry each bit to its piece's new square, and a colour swap
 * (the same position for the mover) trains the same squares on the same targets. */
static void test_survival_random(void **state) {
  (void)state;
  xq_pos_t *pos = malloc(sizeof *pos);
  for (int g = 0; g < 10; g++) {
    xq_game_record_t r;
    int n;
    xq_sample_t *s = random_samples(&r, 150 + 20 * g, &n);
    xq_pos_startpos(pos);
    for (int i = 0; i < r.nplies; i++) xq_pos_make(pos, r.plies[i].move);
    int final = 0;
    for (int sq = 0; sq < XQ_SQUARES; sq++) final += pos->board[sq] != 0;
    for (int k = 0; k < n; k++) {
      int set = 0;
      for (int sq = 0; sq < XQ_SQUARES; sq++) {
        bool b = xq_sample_survives(&s[k], sq);
        set += b;
        if (b) assert_int_not_equal(s[k].board[sq], 0);
      }
      assert_int_equal(set, final);
      xq_sample_t m = s[k], c = s[k];
      xq_sample_mirror(&m);
      xq_sample_colour_swap(&c);
      uint8_t ma[NN_HW], ta[NN_HW], mc[NN_HW], tc[NN_HW];
      xq_sample_survival(ma, ta, &s[k]);
      xq_sample_survival(mc, tc, &c);
      assert_memory_equal(ma, mc, NN_HW);
      assert_memory_equal(ta, tc, NN_HW);
      for (int sq = 0; sq < XQ_SQUARES; sq++) {
        assert_int_equal(xq_sample_survives(&m, xq_sq_mirror(sq)), xq_sample_survives(&s[k], sq));
        assert_int_equal(xq_sample_survives(&c, xq_sq_flip(sq)), xq_sample_survives(&s[k], sq));
      }
    }
    free(s);
    xq_record_free(&r);
  }
  free(pos);
}

/* On random games: the reply target moves with mirror and colour swap like the board,
 * and as trained (the planes' frame) a colour swap leaves it alone; its from square holds
 * a piece of the side not to move, and the last position of a game has none. */
static void test_reply_random(void **state) {
  (void)state;
  for (int g = 0; g < 10; g++) {
    xq_game_record_t r;
    int n, with = 0;
    xq_sample_t *s = random_samples(&r, 150 + 20 * g, &n);
    for (int k = 0; k < n; k++) {
      int16_t sq[2], sc[2], sm[2];
      bool has = xq_sample_reply(sq, &s[k]);
      assert_int_equal(has, s[k].has_reply);
      if (!has) {
        assert_true(sq[0] == -1 && sq[1] == -1);
        continue;
      }
      with++;
      int pc = s[k].board[s[k].reply_from];
      assert_true(pc != 0 && xq_pc_colour(pc) != s[k].side);
      assert_int_not_equal(s[k].reply_from, s[k].reply_to);
      assert_int_equal(sq[0], s[k].side == XQ_RED ? s[k].reply_from : xq_sq_flip(s[k].reply_from));
      xq_sample_t m = s[k], c = s[k];
      xq_sample_mirror(&m);
      xq_sample_colour_swap(&c);
      assert_int_equal(m.reply_from, xq_sq_mirror(s[k].reply_from));
      assert_int_equal(m.reply_to, xq_sq_mirror(s[k].reply_to));
      assert_int_equal(c.reply_from, xq_sq_flip(s[k].reply_from));
      assert_true(xq_sample_reply(sc, &c) && sc[0] == sq[0] && sc[1] == sq[1]);
      assert_true(xq_sample_reply(sm, &m));
      assert_int_equal(xq_pc_type(m.board[m.reply_from]), xq_pc_type(pc));
    }
    assert_true(with >= n - 1);
    free(s);
    xq_record_free(&r);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_random_games),   cmocka_unit_test(test_repetition),
      cmocka_unit_test(test_rejects),        cmocka_unit_test(test_mirror),
      cmocka_unit_test(test_position_mask),  cmocka_unit_test(test_proto_roundtrip),
      cmocka_unit_test(test_hostile_proto),  cmocka_unit_test(test_root_value),
      cmocka_unit_test(test_material_adjudication),
      cmocka_unit_test(test_colour_swap),
      cmocka_unit_test(test_survival_target),
      cmocka_unit_test(test_survival_random),
      cmocka_unit_test(test_reply_random),
      cmocka_unit_test(test_position_without_text),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
