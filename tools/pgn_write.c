/*
 * pgn_write.c: a game as PGN with ICCS moves (pgn_write.h). The moves are replayed with the
 * rules before anything is written, so a file never holds a game that does not replay.
 */
#include "pgn_write.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/notation.h"

/* Writes [name "value"], escaping the quotes and backslashes PGN escapes. */
static void tag(FILE *f, const char *name, const char *value) {
  fprintf(f, "[%s \"", name);
  for (const char *p = value; *p; p++) {
    if (*p == '"' || *p == '\\') fputc('\\', f);
    fputc(*p == '\n' || *p == '\r' ? ' ' : *p, f);
  }
  fputs("\"]\n", f);
}

void xqz_pgn_end_text(xq_result_t result, xq_reason_t reason, char *buf, size_t n) {
  const char *who = result == XQ_RESULT_RED_WIN    ? "Red wins"
                    : result == XQ_RESULT_BLACK_WIN ? "Black wins"
                    : result == XQ_RESULT_DRAW      ? "Drawn"
                                                    : "Unfinished";
  if (result == XQ_RESULT_NONE || reason == XQ_REASON_NONE) snprintf(buf, n, "%s", who);
  else snprintf(buf, n, "%s by %s", who, xq_reason_name(reason));
}

/* Appends word to the movetext, breaking lines before 80 columns. */
static void word(FILE *f, int *col, const char *w) {
  int len = (int)strlen(w);
  if (*col > 0 && *col + 1 + len > 79) {
    fputc('\n', f);
    *col = 0;
  } else if (*col > 0) {
    fputc(' ', f);
    (*col)++;
  }
  fputs(w, f);
  *col += len;
}

int xqz_pgn_write(FILE *f, const xqz_pgn_game_t *g, xq_errbuf_t *eb) {
  xq_pos_t *pos = malloc(sizeof *pos);
  if (!pos) return xq_err_set(eb, XQ_ENOMEM, "out of memory for a position");
  const char *fen = g->start_fen ? g->start_fen : XQ_START_FEN;
  int rc = xq_fen_parse(pos, fen, eb);
  if (rc) {
    free(pos);
    return rc;
  }
  /* The start position by what it is, not by how its FEN was spelt. */
  char canon[XQ_FEN_MAX];
  xq_fen_print(pos, canon);
  bool start = !strncmp(canon, XQ_START_FEN, strlen("rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/"
                                                     "P1P1P1P1P/1C5C1/9/RNBAKABNR w"));
  int side0 = pos->side, move0 = xq_pos_fullmove(pos);
  for (int i = 0; i < g->nmoves; i++) {
    if (!xq_move_is_legal(pos, g->moves[i]) || pos->ply >= XQ_MAX_HISTORY - 1) {
      char mv[5];
      xq_move_print(g->moves[i], mv);
      free(pos);
      return xq_err_set(eb, XQ_EMOVE, "move %d (%s) does not replay from %s", i + 1, mv, fen);
    }
    xq_pos_make(pos, g->moves[i]);
  }
  free(pos);

  tag(f, "Game", "Chinese Chess");
  tag(f, "Event", g->event ? g->event : "?");
  tag(f, "Site", g->site ? g->site : "?");
  tag(f, "Date", g->date ? g->date : "????.??.??");
  tag(f, "Round", g->round ? g->round : "?");
  tag(f, "Red", g->red ? g->red : "?");
  tag(f, "Black", g->black ? g->black : "?");
  tag(f, "Result", xq_result_name(g->result));
  /* XBoard (and WinBoard) switch to the variant on this tag, and only on this tag: without
   * it they read the file as chess. It must come before [FEN], which they parse at once. */
  tag(f, "Variant", "xiangqi");
  if (!start) {
    /* Horse H, elephant E in the board field: XBoard's FEN knows no other letters for them
     * in xiangqi, and the Chinese FEN convention (xqbase) lists H and E as the alternatives
     * of N and B, so readers of either kind, ours included, take them. */
    for (char *c = canon; *c && *c != ' '; c++) {
      if (*c == 'N' || *c == 'n') *c = (char)(*c + ('H' - 'N'));
      else if (*c == 'B' || *c == 'b') *c = (char)(*c + ('E' - 'B'));
    }
    tag(f, "FEN", canon);
  }
  tag(f, "Format", "ICCS");
  char buf[64];
  snprintf(buf, sizeof buf, "%d", g->nmoves);
  tag(f, "PlyCount", buf);
  fputc('\n', f);
  int col = 0, number = move0, side = side0;
  for (int i = 0; i < g->nmoves; i++) {
    char w[48], mv[5];
    xq_move_print(g->moves[i], mv);
    if (side == XQ_RED) snprintf(w, sizeof w, "%d. %s", number, mv);
    else if (i == 0 || (g->values && !isnan(g->values[i - 1]))) snprintf(w, sizeof w, "%d... %s", number, mv);
    else snprintf(w, sizeof w, "%s", mv);
    word(f, &col, w);
    if (g->values && !isnan(g->values[i])) {
      snprintf(w, sizeof w, "{%+.3f}", (double)g->values[i]);
      word(f, &col, w);
    }
    if (side == XQ_BLACK) number++;
    side ^= 1;
  }
  char end[160], text[96];
  xqz_pgn_end_text(g->result, g->reason, text, sizeof text);
  snprintf(end, sizeof end, "{%s%s%s}", text, g->note ? ", " : "", g->note ? g->note : "");
  word(f, &col, end);
  word(f, &col, xq_result_name(g->result));
  fputs("\n\n", f);
  if (ferror(f)) return xq_err_set(eb, XQ_EIO, "writing the game failed");
  return 0;
}
