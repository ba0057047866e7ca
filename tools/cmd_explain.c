/*
 * cmd_explain.c: `xqz explain FEN|startpos [--net FILE] [--json]`: what a network thinks
 * of a position (without --net, the shipped net, as `xqz play` and `xqz engine` take it:
 * default_net.h). Prints the network's value of the position and, for every piece but the
 * kings, the value with that piece taken off the board: the difference is the piece's
 * dynamic worth to its owner in this position, as the network sees it (material, activity
 * and safety at once). A removal that would leave the side not to move in check gives an
 * illegal position; it is shown as such and not evaluated.
 *
 * Values are the raw network value (no search), in [-1, 1], always from Red's point of
 * view in the table; each piece's "worth" is from its owner's point of view, so a
 * positive worth means the owner is better off with the piece.
 *
 * A net with the survival head (docs/network.md) also gives each piece the probability
 * that it is still on the board at the end of the game, from one pass over the position
 * itself: a second, data-driven view of the same piece beside its worth.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_options.h"
#include "commands.h"
#include "default_net.h"
#include "nn/encode.h"
#include "nn/nn_file.h"
#include "nn/nn_forward.h"
#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/policy_index.h"
#include "search/evaluator.h"

/* The command line's options. */
typedef struct {
  const char *net;
  bool json;
} explain_opts_t;

#define O(f) XQ_OPT_FIELD(explain_opts_t, f)
static const xq_opt_t OPTION_ROWS[] = {
    {"net", XQ_OPTION_TEXT, O(net), NULL, 0, 0, .arg = "FILE", .help = "the network (.xqzn)",
     .shown = "the net shipped in nets/ (or $XQZ_NET)"},
    {"json", XQ_OPTION_FLAG, O(json), NULL, 0, 0,
     .help = "one JSON object instead of the table and board"},
};
static const xq_opts_t TABLE = {OPTION_ROWS, (int)(sizeof OPTION_ROWS / sizeof OPTION_ROWS[0]),
                                XQ_OPTS_IN_RANGE};

static void usage(FILE *f) {
  fprintf(f,
          "usage: xqz explain FEN|startpos [--net FILE] [--json]\n"
          "  The network's value of the position and, for each piece (kings excepted),\n"
          "  how much that value changes when the piece is removed: the piece's worth to\n"
          "  its owner in this position. Values are from Red's point of view. A net with\n"
          "  the survival head also shows each piece's probability of surviving the game.\n");
  xq_opts_help(&TABLE, f, 10);
}

typedef struct {
  int sq, pc;
  bool legal;        /* the position without the piece is legal */
  float value_red;   /* network value without the piece, Red's view */
  float worth;       /* owner's view: value with it minus value without it */
  float survival;    /* the survival head's probability that it survives (-1: no head) */
} piece_row_t;

/* surv (90, absolute squares) = the survival head's probabilities on pos, from the net at
 * path (which has the head). 0 or a negative code with the reason in eb. */
static int survival_of(const char *path, const xq_pos_t *pos, float *surv, xq_errbuf_t *eb) {
  nn_model_t *m = NULL;
  nn_plan_t *plan = NULL;
  int rc = nn_file_load(path, &m, NULL, eb);
  if (!rc) rc = nn_plan_new(&plan, &m->arch, 1, false, eb);
  if (!rc) {
    static float planes[NN_INPUT_PLANES_MAX * NN_HW];
    float v[NN_HW];
    nn_model_fold(m);
    nn_encode(planes, pos, nn_arch_input_planes(&m->arch));
    nn_infer(NULL, NULL, plan, m, planes, NULL, 1);
    nn_infer_survival(v, plan, m, 1);
    /* The head answers in the planes' frame: the side to move's view (encode.h). */
    for (int sq = 0; sq < XQ_SQUARES; sq++)
      surv[sq] = v[pos->side == XQ_RED ? sq : xq_sq_flip(sq)];
  }
  nn_plan_free(&plan);
  nn_model_free(&m);
  return rc;
}

static const char PIECE_CHARS[] = " KABNRCP";
static const char *const PIECE_NAMES[] = {"", "king", "advisor", "elephant", "horse",
                                          "rook", "cannon", "pawn"};

static char piece_char(int pc) {
  char c = PIECE_CHARS[xq_pc_type(pc)];
  return xq_pc_colour(pc) == XQ_RED ? c : (char)(c - 'A' + 'a');
}

static void square_name(int sq, char out[3]) {
  out[0] = (char)('a' + xq_sq_file(sq));
  out[1] = (char)('0' + xq_sq_rank(sq));
  out[2] = '\0';
}

/* The side that has just moved must not be in check: otherwise the position is illegal. */
static bool position_legal(xq_pos_t *pos) {
  pos->side ^= 1;
  bool other_in_check = xq_in_check(pos);
  pos->side ^= 1;
  return !other_in_check;
}

static float red_view(float v, int side) { return side == XQ_RED ? v : -v; }

static void print_table(const char *fen, const nn_file_meta_t *meta, const char *net_path,
                        const xq_pos_t *pos, float value, const piece_row_t *rows, int n) {
  printf("position  %s\n", fen);
  printf("net       %s (id %016llx, step %lld)\n", net_path, (unsigned long long)meta->net_id,
         (long long)meta->step);
  printf("value     %+.3f for Red (%s to move)\n\n", value,
         pos->side == XQ_RED ? "Red" : "Black");
  /* A net with the survival head: its probability first, "survives", then the rest. */
  bool head = n > 0 && rows[0].survival >= 0.0f;
  printf("%-4s %-6s %-9s %s%-8s %s\n", "sq", "piece", "", head ? "survives " : "", "without",
         "worth to owner");
  for (int i = 0; i < n; i++) {
    const piece_row_t *r = &rows[i];
    char sq[3], surv[16] = "";
    square_name(r->sq, sq);
    if (head) snprintf(surv, sizeof surv, "%-8.2f ", (double)r->survival);
    if (!r->legal) {
      printf("%-4s %c      %-9s %s%-8s illegal (leaves a king in check)\n", sq, piece_char(r->pc),
             PIECE_NAMES[xq_pc_type(r->pc)], surv, "-");
      continue;
    }
    printf("%-4s %c      %-9s %s%+.3f   %+.3f\n", sq, piece_char(r->pc),
           PIECE_NAMES[xq_pc_type(r->pc)], surv, r->value_red, r->worth);
  }
  if (head)
    printf("\nsurvives: the survival head's probability that the piece is still on the board"
           " at the end of the game\n");
  /* The board with each piece's worth in hundredths, Black's side on top. */
  printf("\nworth x100 on the board (Red at the bottom; K = king, . = empty)\n");
  for (int rank = XQ_RANKS - 1; rank >= 0; rank--) {
    printf("%d ", rank);
    for (int file = 0; file < XQ_FILES; file++) {
      int sq = xq_sq(file, rank), pc = pos->board[sq];
      const piece_row_t *r = NULL;
      for (int i = 0; i < n; i++)
        if (rows[i].sq == sq) r = &rows[i];
      if (!pc) printf("    .  ");
      else if (!r) printf("   %c   ", piece_char(pc));
      else if (!r->legal) printf("  %c  ? ", piece_char(pc));
      else printf(" %c%+4d ", piece_char(pc), (int)(r->worth * 100.0f + (r->worth < 0 ? -0.5f : 0.5f)));
    }
    printf("\n");
  }
  printf("  ");
  for (int file = 0; file < XQ_FILES; file++) printf("   %c   ", 'a' + file);
  printf("\n");
}

static void print_json(const char *fen, const nn_file_meta_t *meta, float value,
                       const piece_row_t *rows, int n) {
  printf("{\"fen\":\"%s\",\"net_id\":\"%016llx\",\"step\":%lld,\"value\":%.6f,"
         "\"survival_head\":%s,\"pieces\":[", fen, (unsigned long long)meta->net_id,
         (long long)meta->step, value, meta->arch.survival ? "true" : "false");
  for (int i = 0; i < n; i++) {
    const piece_row_t *r = &rows[i];
    char sq[3];
    square_name(r->sq, sq);
    printf("%s{\"square\":\"%s\",\"piece\":\"%c\",\"name\":\"%s\",\"colour\":\"%s\",", i ? "," : "",
           sq, piece_char(r->pc), PIECE_NAMES[xq_pc_type(r->pc)],
           xq_pc_colour(r->pc) == XQ_RED ? "red" : "black");
    if (r->survival >= 0.0f) printf("\"survival\":%.6f,", (double)r->survival);
    if (r->legal) printf("\"legal\":true,\"value_without\":%.6f,\"worth\":%.6f}", r->value_red, r->worth);
    else printf("\"legal\":false}");
  }
  printf("]}\n");
}

int xqz_cmd_explain(int argc, char **argv) {
  explain_opts_t o = {0};
  const char **words = calloc((size_t)argc + 1, sizeof *words);
  int nwords = 0;
  if (!words) return 1;
  int st = xqz_options_parse("explain", &TABLE, &o, argc, argv, words, &nwords, usage);
  if (st < 0 && nwords != 1) st = xqz_usage_error("explain", "give one position: FEN or startpos");
  const char *fen = nwords ? words[0] : NULL, *net = o.net;
  free(words);
  if (st >= 0) return st;
  bool json = o.json;
  if (!net) {
    xq_errbuf_t deb = {{0}};
    net = xqz_default_net(&deb);
    if (!net) {
      fprintf(stderr, "xqz explain: %s\n", deb.msg);
      return 2;
    }
  }
  if (!strcmp(fen, "startpos")) fen = XQ_START_FEN;
  static xq_pos_t pos, work[XQ_SQUARES + 1];
  xq_errbuf_t eb;
  if (xq_fen_parse(&pos, fen, &eb)) {
    fprintf(stderr, "xqz explain: bad FEN: %s\n", eb.msg);
    return 2;
  }
  nn_file_meta_t meta;
  if (nn_file_info(net, &meta, 1, &eb)) {
    fprintf(stderr, "xqz explain: %s\n", eb.msg);
    return 1;
  }
  /* Batch: the position itself, then one position per removable piece. */
  piece_row_t rows[XQ_SQUARES];
  xq_pos_t *batch[XQ_SQUARES + 1];
  int n = 0, nb = 0;
  work[nb] = pos;
  batch[nb] = &work[nb];
  nb++;
  for (int sq = 0; sq < XQ_SQUARES; sq++) {
    int pc = pos.board[sq];
    if (!pc || xq_pc_type(pc) == XQ_KING) continue;
    piece_row_t *r = &rows[n++];
    memset(r, 0, sizeof *r);
    r->sq = sq;
    r->pc = pc;
    r->survival = -1.0f;
    xq_pos_t *w = &work[nb];
    *w = pos;
    xq_pos_put(w, sq, 0);
    w->in_check = xq_in_check(w);
    r->legal = position_legal(w);
    if (r->legal) batch[nb++] = w;
  }
  xq_evaluator_t *ev = NULL;
  if (xq_evaluator_net_new(&ev, net, nb, &eb)) {
    fprintf(stderr, "xqz explain: %s\n", eb.msg);
    return 1;
  }
  float *priors = malloc((size_t)nb * XQ_POLICY_SIZE * sizeof *priors);
  float values[XQ_SQUARES + 1];
  if (!priors) {
    xq_evaluator_free(&ev);
    fprintf(stderr, "xqz explain: out of memory\n");
    return 1;
  }
  ev->eval(ev, batch, nb, priors, values);
  if (meta.arch.survival) {
    float surv[XQ_SQUARES];
    if (survival_of(net, &pos, surv, &eb)) {
      free(priors);
      xq_evaluator_free(&ev);
      fprintf(stderr, "xqz explain: %s\n", eb.msg);
      return 1;
    }
    for (int i = 0; i < n; i++) rows[i].survival = surv[rows[i].sq];
  }
  float value = red_view(values[0], pos.side);
  for (int i = 0, k = 1; i < n; i++) {
    if (!rows[i].legal) continue;
    rows[i].value_red = red_view(values[k++], pos.side);
    float sign = xq_pc_colour(rows[i].pc) == XQ_RED ? 1.0f : -1.0f;
    rows[i].worth = sign * (value - rows[i].value_red);
  }
  if (json) print_json(fen, &meta, value, rows, n);
  else print_table(fen, &meta, net, &pos, value, rows, n);
  free(priors);
  xq_evaluator_free(&ev);
  return 0;
}
