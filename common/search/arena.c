/*
 * arena.c: opening sets, single games judged by the rules, and paired matches with
 * W/D/L, pentanomial pair counts and the GSPRT stop (see arena.h).
 */
#include "search/arena.h"

#include <assert.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/material.h"
#include "rules/notation.h"
#include "support/rng.h"

/* The built-in set: every pairing of 11 common first moves for Red with 8 common replies
 * for Black, 88 distinct two-ply lines (the same as scripts/bench/openings-ladder.txt). Nets
 * play without noise, so a repeated opening repeats its games: with 88 lines a match of up
 * to 176 games (88 pairs) never plays a game twice. */
static const char *const builtin_first[] = {"h2e2", "b2e2", "h2d2", "b2f2", "c3c4", "g3g4",
                                            "e3e4", "c0e2", "g0e2", "h0g2", "b0c2"};
static const char *const builtin_reply[] = {"h9g7", "b9c7", "h7e7", "b7e7",
                                            "c6c5", "g6g5", "c9e7", "g9e7"};
#define XQ_NFIRST (sizeof builtin_first / sizeof builtin_first[0])
#define XQ_NREPLY (sizeof builtin_reply / sizeof builtin_reply[0])

static bool arena_is_move_token(const char *t, size_t n) {
  return n == 4 && t[0] >= 'a' && t[0] <= 'i' && isdigit((unsigned char)t[1]) && t[2] >= 'a' &&
         t[2] <= 'i' && isdigit((unsigned char)t[3]);
}

int xq_opening_setup(xq_pos_t *pos, const char *line, xq_errbuf_t *eb) {
  /* The FEN is everything before the first move token or the word "moves". */
  char fen[256];
  const char *p = line, *moves = NULL;
  while (*p) {
    while (*p == ' ' || *p == '\t') p++;
    size_t n = strcspn(p, " \t\r\n");
    if (!n) break;
    if ((n == 5 && !strncmp(p, "moves", 5)) || (p != line && arena_is_move_token(p, n))) {
      moves = p;
      break;
    }
    p += n;
  }
  size_t flen = (size_t)((moves ? moves : p) - line);
  while (flen && isspace((unsigned char)line[flen - 1])) flen--;
  if (flen >= sizeof fen) return xq_err_set(eb, XQ_EINVAL, "opening line too long: %.60s", line);
  memcpy(fen, line, flen);
  fen[flen] = 0;
  if (!strcmp(fen, "startpos")) {
    xq_pos_startpos(pos);
  } else {
    xq_errbuf_t why = {{0}};
    if (xq_fen_parse(pos, fen, &why))
      return xq_err_set(eb, XQ_EFEN, "opening '%.80s': %s", fen, why.msg);
  }
  for (p = moves; p && *p;) {
    while (*p == ' ' || *p == '\t') p++;
    size_t n = strcspn(p, " \t\r\n");
    if (!n) break;
    if (n == 5 && !strncmp(p, "moves", 5)) {
      p += n;
      continue;
    }
    char tok[8];
    if (n >= sizeof tok) return xq_err_set(eb, XQ_EMOVE, "opening: bad move '%.*s'", (int)n, p);
    memcpy(tok, p, n);
    tok[n] = 0;
    xq_move_t m;
    xq_errbuf_t why = {{0}};
    if (xq_move_parse_legal(pos, tok, &m, &why))
      return xq_err_set(eb, XQ_EMOVE, "opening '%.60s': move %s: %s", line, tok, why.msg);
    if (pos->ply >= XQ_MAX_HISTORY / 2)
      return xq_err_set(eb, XQ_EINVAL, "opening '%.60s' is too long", line);
    xq_pos_make(pos, m);
    p += n;
  }
  return 0;
}

static int arena_add(xq_openings_t *o, const char *line, int *cap) {
  if (o->n == *cap) {
    int ncap = *cap ? 2 * *cap : 16;
    char **nl = realloc(o->lines, (size_t)ncap * sizeof *nl);
    if (!nl) return XQ_ENOMEM;
    o->lines = nl;
    *cap = ncap;
  }
  if (!(o->lines[o->n] = strdup(line))) return XQ_ENOMEM;
  o->n++;
  return 0;
}

int xq_openings_load(xq_openings_t *o, const char *path, xq_errbuf_t *eb) {
  o->lines = NULL;
  o->n = 0;
  int cap = 0, rc = 0;
  static xq_pos_t pos; /* only for checking; large */
  if (!path) {
    for (size_t i = 0; i < XQ_NFIRST * XQ_NREPLY && !rc; i++) {
      char line[32];
      snprintf(line, sizeof line, "startpos %s %s", builtin_first[i / XQ_NREPLY],
               builtin_reply[i % XQ_NREPLY]);
      rc = arena_add(o, line, &cap);
    }
    if (rc) xq_openings_close(o);
    return rc ? xq_err_set(eb, rc, "out of memory") : 0;
  }
  FILE *f = fopen(path, "r");
  if (!f) return xq_err_set(eb, XQ_EIO, "cannot open openings file %s", path);
  char line[8192];
  int lineno = 0;
  while (!rc && fgets(line, sizeof line, f)) {
    lineno++;
    line[strcspn(line, "\r\n")] = 0;
    const char *s = line;
    while (isspace((unsigned char)*s)) s++;
    if (!*s || *s == '#') continue;
    xq_errbuf_t why = {{0}};
    if (xq_opening_setup(&pos, s, &why))
      rc = xq_err_set(eb, XQ_EFORMAT, "%s:%d: %s", path, lineno, why.msg);
    else if (arena_add(o, s, &cap))
      rc = xq_err_set(eb, XQ_ENOMEM, "out of memory");
  }
  fclose(f);
  if (!rc && o->n == 0) rc = xq_err_set(eb, XQ_EFORMAT, "%s: no openings in the file", path);
  if (rc) xq_openings_close(o);
  return rc;
}

void xq_openings_close(xq_openings_t *o) {
  for (int i = 0; i < o->n; i++) free(o->lines[i]);
  free(o->lines);
  o->lines = NULL;
  o->n = 0;
}

int xq_arena_game(xq_player_t *red, xq_player_t *black, const char *opening, int max_plies,
                  double material_pawns, xq_outcome_t *out, int *plies, xq_errbuf_t *eb) {
  assert(max_plies >= 1 && max_plies <= XQ_ARENA_MAX_PLIES);
  xq_pos_t *pos = malloc(sizeof *pos);
  if (!pos) return xq_err_set(eb, XQ_ENOMEM, "out of memory");
  int rc = xq_opening_setup(pos, opening, eb);
  if (!rc) rc = xq_player_new_game(red, eb);
  if (!rc) rc = xq_player_new_game(black, eb);
  int start_ply = pos->ply;
  while (!rc) {
    *out = xq_adjudicate(pos, max_plies);
    if (out->result != XQ_RESULT_NONE) break;
    if (pos->ply >= XQ_MAX_HISTORY - 1) { /* cannot happen with max_plies capped */
      out->result = XQ_RESULT_DRAW;
      out->reason = XQ_REASON_LENGTH_CAP;
      break;
    }
    xq_player_t *mover = pos->side == XQ_RED ? red : black;
    xq_move_t m = 0;
    rc = xq_player_move(mover, pos, &m, eb);
    if (!rc && !xq_move_is_legal(pos, m)) {
      char buf[5];
      xq_move_print(m, buf);
      rc = xq_err_set(eb, XQ_EMOVE, "%s chose illegal move %s", xq_player_name(mover), buf);
    }
    if (!rc) xq_pos_make(pos, m);
  }
  if (!rc && out->reason == XQ_REASON_LENGTH_CAP)
    out->result = xq_material_result(pos->board, material_pawns);
  *plies = pos->ply - start_ply;
  free(pos);
  return rc;
}

int xq_arena_run(const xq_arena_config_t *cfg, xq_player_t *a, xq_player_t *b,
                 const xq_openings_t *openings, xq_arena_stats_t *st, xq_errbuf_t *eb) {
  assert(cfg->games >= 1 && openings->n >= 1);
  memset(st, 0, sizeof *st);
  xq_rng_t rng;
  xq_rng_seed(&rng, cfg->seed);
  int first = (int)xq_rng_below(&rng, (uint64_t)openings->n);
  int64_t npairs = (cfg->games + 1) / 2;
  for (int64_t pair = 0; pair < npairs; pair++) {
    const char *opening = openings->lines[(first + pair) % openings->n];
    double pair_points = 0;
    int legs = cfg->games - 2 * pair >= 2 ? 2 : 1; /* an odd last game has no partner */
    for (int leg = 0; leg < legs; leg++) {
      bool a_red = leg == 0;
      xq_outcome_t out = {0};
      int plies = 0;
      char why[sizeof eb->msg];
      xq_errbuf_t geb = {{0}};
      int rc = xq_arena_game(a_red ? a : b, a_red ? b : a, opening, cfg->max_plies, 0.0, &out,
                             &plies, &geb);
      if (rc) {
        snprintf(why, sizeof why, "%s", geb.msg);
        return xq_err_set(eb, rc, "game %lld: %s", (long long)st->games + 1, why);
      }
      double points = 0.5;
      if (out.result != XQ_RESULT_DRAW)
        points = (out.result == XQ_RESULT_RED_WIN) == a_red ? 1.0 : 0.0;
      st->games++;
      st->plies += plies;
      st->reasons[out.reason]++;
      if (points == 1.0) st->wins++;
      else if (points == 0.5) st->draws++;
      else st->losses++;
      pair_points += points;
      if (cfg->on_game) cfg->on_game(cfg->ctx, st->games - 1, a_red, out, plies, st);
    }
    if (legs < 2) break;
    st->pairs[(int)(pair_points * 2 + 0.5)]++;
    if (cfg->sprt) {
      st->llr = xq_sprt_llr_pentanomial(st->pairs, cfg->elo0, cfg->elo1);
      st->sprt = xq_sprt_decide(st->llr, cfg->alpha, cfg->beta);
      if (st->sprt != XQ_SPRT_NONE) break;
    }
  }
  return 0;
}
