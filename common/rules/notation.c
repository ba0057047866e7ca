/*
 * notation.c: moves as text (notation.h): ICCS coordinates ("h2e2"), WXF ("C2=5") and
 * Chinese (炮二平五).
 *
 * WXF and Chinese are one grammar written with two alphabets, so both are read by one
 * tokenizer (a piece, a number, or a sign: + - = standing for 前/进, 后/退, 中/平) and one
 * list of token patterns. A parsed text is a filter (piece kind, file or place among doubled
 * pieces, direction, number) applied to the legal moves: exactly one must pass. Writing
 * picks the fields the same filter needs, so every text written reads back as its move.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "rules/movegen.h"
#include "rules/notation.h"

void xq_move_print(xq_move_t m, char *buf) {
  int from = xq_mv_from(m), to = xq_mv_to(m);
  buf[0] = (char)('a' + xq_sq_file(from));
  buf[1] = (char)('0' + xq_sq_rank(from));
  buf[2] = (char)('a' + xq_sq_file(to));
  buf[3] = (char)('0' + xq_sq_rank(to));
  buf[4] = 0;
}

static int parse_square(const char *s, int *sq) {
  char f = (char)tolower((unsigned char)s[0]);
  if (f < 'a' || f > 'i' || s[1] < '0' || s[1] > '9') return -1;
  *sq = xq_sq(f - 'a', s[1] - '0');
  return 0;
}

int xq_move_parse(const char *s, xq_move_t *m, xq_errbuf_t *eb) {
  int from, to;
  if (!s || !s[0] || !s[1] || !s[2] || !s[3] || (s[4] && !isspace((unsigned char)s[4])))
    return xq_err_set(eb, XQ_EMOVE, "a move is 4 characters of coordinates, like h2e2");
  if (parse_square(s, &from) || parse_square(s + 2, &to))
    return xq_err_set(eb, XQ_EMOVE, "bad square in move (files a-i, ranks 0-9, like h2e2)");
  if (from == to) return xq_err_set(eb, XQ_EMOVE, "move goes nowhere");
  *m = xq_mv_make(from, to);
  return 0;
}

int xq_move_parse_legal(xq_pos_t *pos, const char *s, xq_move_t *m, xq_errbuf_t *eb) {
  int rc = xq_move_parse(s, m, eb);
  if (rc) return rc;
  if (!xq_move_is_legal(pos, *m)) {
    char buf[5];
    xq_move_print(*m, buf);
    return xq_err_set(eb, XQ_EMOVE, "%s is not a legal move in this position", buf);
  }
  return 0;
}

/* ---- WXF and Chinese ------------------------------------------------------------------ */

enum { TK_PIECE = 'P', TK_NUM = 'N', TK_SIGN = 'S' };
enum { POS_NONE = 0, POS_REAR = -1, POS_MIDDLE = -2 }; /* else 1..5: place from the front */
#define MAX_TOKENS 6

typedef struct {
  char kind; /* TK_... */
  int v;     /* piece type, number 1..9, or '+', '-', '=' */
} tok_t;

/* What a text says about its move; 0 fields are unsaid. */
typedef struct {
  int type;  /* XQ_KING.. or 0: any kind */
  int file;  /* 1..9 in the mover's count, or 0 */
  int place; /* POS_... or 1..5 */
  int op;    /* '+', '-', '=' */
  int num;   /* 1..9 */
} spec_t;

/* UTF-8 words of the Chinese notation, traditional forms and full-width digits included. */
static const struct {
  const char *s;
  char kind;
  int v;
} WORDS[] = {
    {"帅", TK_PIECE, XQ_KING},     {"帥", TK_PIECE, XQ_KING},     {"将", TK_PIECE, XQ_KING},
    {"將", TK_PIECE, XQ_KING},     {"仕", TK_PIECE, XQ_ADVISOR},  {"士", TK_PIECE, XQ_ADVISOR},
    {"相", TK_PIECE, XQ_ELEPHANT}, {"象", TK_PIECE, XQ_ELEPHANT}, {"马", TK_PIECE, XQ_HORSE},
    {"馬", TK_PIECE, XQ_HORSE},    {"傌", TK_PIECE, XQ_HORSE},    {"车", TK_PIECE, XQ_ROOK},
    {"車", TK_PIECE, XQ_ROOK},     {"俥", TK_PIECE, XQ_ROOK},     {"炮", TK_PIECE, XQ_CANNON},
    {"砲", TK_PIECE, XQ_CANNON},   {"包", TK_PIECE, XQ_CANNON},   {"兵", TK_PIECE, XQ_PAWN},
    {"卒", TK_PIECE, XQ_PAWN},     {"一", TK_NUM, 1},             {"二", TK_NUM, 2},
    {"三", TK_NUM, 3},             {"四", TK_NUM, 4},             {"五", TK_NUM, 5},
    {"六", TK_NUM, 6},             {"七", TK_NUM, 7},             {"八", TK_NUM, 8},
    {"九", TK_NUM, 9},             {"１", TK_NUM, 1},             {"２", TK_NUM, 2},
    {"３", TK_NUM, 3},             {"４", TK_NUM, 4},             {"５", TK_NUM, 5},
    {"６", TK_NUM, 6},             {"７", TK_NUM, 7},             {"８", TK_NUM, 8},
    {"９", TK_NUM, 9},             {"进", TK_SIGN, '+'},          {"進", TK_SIGN, '+'},
    {"退", TK_SIGN, '-'},          {"平", TK_SIGN, '='},          {"前", TK_SIGN, '+'},
    {"后", TK_SIGN, '-'},          {"後", TK_SIGN, '-'},          {"中", TK_SIGN, '='},
};

static int letter_type(int c) {
  switch (toupper(c)) {
  case 'K': case 'G': return XQ_KING;
  case 'A': return XQ_ADVISOR;
  case 'E': case 'B': return XQ_ELEPHANT;
  case 'H': case 'N': return XQ_HORSE;
  case 'R': return XQ_ROOK;
  case 'C': return XQ_CANNON;
  case 'P': return XQ_PAWN;
  default: return 0;
  }
}

/* Splits s into tokens; the count, or -1 for a character no notation uses (or too many). */
static int tokenize(const char *s, tok_t *t) {
  int n = 0;
  while (*s) {
    if (*s == ' ' || *s == '\t') {
      s++;
      continue;
    }
    if (n == MAX_TOKENS) return -1;
    unsigned char c = (unsigned char)*s;
    if (c < 0x80) {
      if (c >= '1' && c <= '9') t[n] = (tok_t){TK_NUM, c - '0'};
      else if (c == '+' || c == '-' || c == '=') t[n] = (tok_t){TK_SIGN, c};
      else if (c == '.') t[n] = (tok_t){TK_SIGN, '='};
      else if (letter_type(c)) t[n] = (tok_t){TK_PIECE, letter_type(c)};
      else return -1;
      n++;
      s++;
      continue;
    }
    size_t k = 0, nw = sizeof WORDS / sizeof WORDS[0];
    for (; k < nw; k++) {
      size_t len = strlen(WORDS[k].s);
      if (!strncmp(s, WORDS[k].s, len)) {
        t[n++] = (tok_t){WORDS[k].kind, WORDS[k].v};
        s += len;
        break;
      }
    }
    if (k == nw) return -1;
  }
  return n;
}

static int sign_place(int sign) {
  return sign == '+' ? 1 : sign == '-' ? POS_REAR : POS_MIDDLE;
}

/* Reads the tokens into sp by the first pattern their kinds fit. 0, or -1 for none. */
static int tokens_to_spec(const tok_t *t, int n, spec_t *sp) {
  char kinds[MAX_TOKENS + 1];
  if (n < 0 || n > MAX_TOKENS) return -1; /* tokenize's bound, said again for gcc -O3 */
  for (int i = 0; i < n; i++) kinds[i] = t[i].kind;
  kinds[n] = 0;
  memset(sp, 0, sizeof *sp);
  if (n < 4 || t[n - 2].kind != TK_SIGN || t[n - 1].kind != TK_NUM) return -1;
  sp->op = t[n - 2].v;
  sp->num = t[n - 1].v;
  if (!strcmp(kinds, "PNSN")) { /* C2=5, 炮二平五 */
    sp->type = t[0].v;
    sp->file = t[1].v;
  } else if (!strcmp(kinds, "SPSN")) { /* +C=5, 前炮平五 */
    sp->place = sign_place(t[0].v);
    sp->type = t[1].v;
  } else if (!strcmp(kinds, "PSSN")) { /* C+=5 */
    sp->type = t[0].v;
    sp->place = sign_place(t[1].v);
  } else if (!strcmp(kinds, "SPNSN")) { /* +P7=6, 前兵七平六 */
    sp->place = sign_place(t[0].v);
    sp->type = t[1].v;
    sp->file = t[2].v;
  } else if (!strcmp(kinds, "SNSN")) { /* 前七进一: doubled pawns on two files */
    sp->place = sign_place(t[0].v);
    sp->file = t[1].v;
  } else if (!strcmp(kinds, "NPSN") || !strcmp(kinds, "NNSN") || !strcmp(kinds, "NPNSN")) {
    if (t[0].v > 5) return -1; /* 2P+1, 二兵平四: the 2nd of 4 or 5 pawns from the front */
    sp->place = t[0].v;
    if (t[1].kind == TK_PIECE) sp->type = t[1].v;
    else sp->file = t[1].v;
    if (n == 5) sp->file = t[2].v;
  } else {
    return -1;
  }
  return 0;
}

/* File 0..8 of the mover's file number n (1..9, counted from the mover's right). */
static int file_of_number(int side, int n) { return side == XQ_RED ? 9 - n : n - 1; }
static int number_of_file(int side, int f) { return side == XQ_RED ? 9 - f : f + 1; }
/* Kings, rooks, cannons and pawns move along lines: their forward number is a distance. */
static int moves_straight(int type) {
  return type == XQ_KING || type == XQ_ROOK || type == XQ_CANNON || type == XQ_PAWN;
}

/* The pieces like the one on sq on its file (*count) and sq's place among them counted
 * from the front, the one nearest the opponent being 1 (*place). */
static void doubled(const xq_pos_t *pos, int sq, int *count, int *place) {
  int pc = pos->board[sq], f = xq_sq_file(sq), r0 = xq_sq_rank(sq);
  bool red = xq_pc_colour(pc) == XQ_RED;
  *count = 0;
  *place = 1;
  for (int r = 0; r < XQ_RANKS; r++) {
    if (pos->board[xq_sq(f, r)] != pc) continue;
    (*count)++;
    if (red ? r > r0 : r < r0) (*place)++;
  }
}

/* True when legal move m of pos passes every field sp gives. */
static bool spec_fits(const xq_pos_t *pos, const spec_t *sp, xq_move_t m) {
  int from = xq_mv_from(m), to = xq_mv_to(m), side = pos->side;
  int type = xq_pc_type(pos->board[from]);
  if (sp->type && type != sp->type) return false;
  if (sp->file && xq_sq_file(from) != file_of_number(side, sp->file)) return false;
  if (sp->place) {
    int count, place;
    doubled(pos, from, &count, &place);
    if (count < 2) return false;
    if (sp->place == POS_REAR && place != count) return false;
    if (sp->place == POS_MIDDLE && (count != 3 || place != 2)) return false;
    if (sp->place > 0 && place != sp->place) return false;
  }
  int dr = (xq_sq_rank(to) - xq_sq_rank(from)) * (side == XQ_RED ? 1 : -1); /* forward */
  if (sp->op == '=')
    return dr == 0 && xq_sq_file(to) == file_of_number(side, sp->num);
  if (sp->op == '+' ? dr <= 0 : dr >= 0) return false;
  if (moves_straight(type))
    return xq_sq_file(to) == xq_sq_file(from) && (dr < 0 ? -dr : dr) == sp->num;
  return xq_sq_file(to) == file_of_number(side, sp->num);
}

/* The legal moves of pos that sp fits, into out (XQ_MAX_MOVES); their count. */
static int spec_moves(xq_pos_t *pos, const spec_t *sp, xq_move_t *out) {
  xq_move_t all[XQ_MAX_MOVES];
  int n = xq_gen_legal(pos, all), k = 0;
  for (int i = 0; i < n; i++)
    if (spec_fits(pos, sp, all[i])) out[k++] = all[i];
  return k;
}

int xq_move_parse_wxf(xq_pos_t *pos, const char *s, xq_move_t *m, xq_errbuf_t *eb) {
  tok_t t[MAX_TOKENS];
  spec_t sp;
  int nt = tokenize(s, t);
  if (nt < 0 || tokens_to_spec(t, nt, &sp) < 0)
    return xq_err_set(eb, XQ_EMOVE, "'%s' is not a move: type ICCS (h2e2), WXF (C2=5, +C=5) "
                      "or Chinese (炮二平五, 马8进7)", s);
  xq_move_t fit[XQ_MAX_MOVES];
  int k = spec_moves(pos, &sp, fit);
  if (k == 1) {
    *m = fit[0];
    return 0;
  }
  const char *side = pos->side == XQ_RED ? "Red" : "Black";
  if (k == 0)
    return xq_err_set(eb, XQ_EMOVE, "no legal move of %s fits '%s' (files are counted from "
                      "%s's right, 1-9; is that piece on that file, and may it go there?)",
                      side, s, side);
  char list[64] = "", mv[5];
  for (int i = 0; i < k && i < 6; i++) {
    xq_move_print(fit[i], mv);
    snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "", mv);
  }
  return xq_err_set(eb, XQ_EMOVE, "'%s' is ambiguous: it fits %s; say which piece (front/rear: "
                    "+C or 前炮; or the file)", s, list);
}

/* True for "h2e2" or "h2-e2" (either case): the shape of coordinates. */
static bool iccs_shape(const char *s, char out[5]) {
  size_t n = strlen(s);
  const char *b = s + 2;
  if (n == 5 && s[2] == '-') b = s + 3;
  else if (n != 4) return false;
  const char c[4] = {s[0], s[1], b[0], b[1]};
  for (int i = 0; i < 4; i += 2) {
    int f = tolower((unsigned char)c[i]);
    if (f < 'a' || f > 'i' || c[i + 1] < '0' || c[i + 1] > '9') return false;
    out[i] = (char)f;
    out[i + 1] = c[i + 1];
  }
  out[4] = 0;
  return true;
}

int xq_move_parse_any(xq_pos_t *pos, const char *s, xq_move_t *m, xq_errbuf_t *eb) {
  char buf[64], iccs[5];
  size_t lead = strspn(s, " \t"), n = strlen(s + lead);
  while (n && isspace((unsigned char)s[lead + n - 1])) n--;
  if (n >= sizeof buf)
    return xq_err_set(eb, XQ_EMOVE, "'%.20s...' is too long for a move", s + lead);
  memcpy(buf, s + lead, n);
  buf[n] = 0;
  if (!n) return xq_err_set(eb, XQ_EMOVE, "no move given");
  if (iccs_shape(buf, iccs)) return xq_move_parse_legal(pos, iccs, m, eb);
  return xq_move_parse_wxf(pos, buf, m, eb);
}

/* ---- writing -------------------------------------------------------------------------- */

static const char *const CN_PIECE[2][8] = {
    {"", "帅", "仕", "相", "马", "车", "炮", "兵"},
    {"", "将", "士", "象", "马", "车", "炮", "卒"},
};
static const char *const CN_NUM[10] = {"", "一", "二", "三", "四", "五", "六", "七", "八", "九"};
static const char WXF_LETTER[8] = {'?', 'K', 'A', 'E', 'H', 'R', 'C', 'P'};

/* The fields that name legal move m of pos: a filter only m passes. */
static void move_spec(xq_pos_t *pos, xq_move_t m, spec_t *sp) {
  int from = xq_mv_from(m), to = xq_mv_to(m), side = pos->side, count, place;
  memset(sp, 0, sizeof *sp);
  sp->type = xq_pc_type(pos->board[from]);
  doubled(pos, from, &count, &place);
  if (count == 1) {
    sp->file = number_of_file(side, xq_sq_file(from));
  } else if (count == 2) {
    sp->place = place == 1 ? 1 : POS_REAR;
  } else if (count == 3) {
    sp->place = place == 1 ? 1 : place == 2 ? POS_MIDDLE : POS_REAR;
  } else {
    sp->place = place;
  }
  int dr = (xq_sq_rank(to) - xq_sq_rank(from)) * (side == XQ_RED ? 1 : -1);
  sp->op = dr > 0 ? '+' : dr < 0 ? '-' : '=';
  sp->num = dr != 0 && moves_straight(sp->type) ? (dr < 0 ? -dr : dr)
                                                : number_of_file(side, xq_sq_file(to));
  /* Doubled pawns on two files: the place alone names two pawns, so the file is added. */
  xq_move_t fit[XQ_MAX_MOVES];
  if (sp->place && spec_moves(pos, sp, fit) > 1) sp->file = number_of_file(side, xq_sq_file(from));
}

int xq_move_to_wxf(xq_pos_t *pos, xq_move_t m, char *buf, size_t n) {
  if (!xq_move_is_legal(pos, m)) {
    snprintf(buf, n, "?");
    return XQ_EMOVE;
  }
  spec_t sp;
  move_spec(pos, m, &sp);
  char head[16]; /* room for any int, so gcc -O3 sees no truncation */
  char letter = WXF_LETTER[sp.type];
  if (!sp.place) snprintf(head, sizeof head, "%c%d", letter, sp.file);
  else if (sp.place > 0 && sp.place != 1) snprintf(head, sizeof head, "%d%c", sp.place, letter);
  else snprintf(head, sizeof head, "%c%c", sp.place == 1 ? '+' : sp.place == POS_REAR ? '-' : '=',
                letter);
  if (sp.place && sp.file) snprintf(head + 2, sizeof head - 2, "%d", sp.file);
  snprintf(buf, n, "%s%c%d", head, sp.op, sp.num);
  return 0;
}

int xq_move_to_chinese(xq_pos_t *pos, xq_move_t m, char *buf, size_t n) {
  if (!xq_move_is_legal(pos, m)) {
    snprintf(buf, n, "?");
    return XQ_EMOVE;
  }
  spec_t sp;
  move_spec(pos, m, &sp);
  int side = pos->side;
  char num[2][8]; /* the file and the number, in the mover's numerals */
  int v[2] = {sp.file, sp.num};
  for (int i = 0; i < 2; i++) {
    if (side == XQ_RED) snprintf(num[i], sizeof num[i], "%s", CN_NUM[v[i]]);
    else snprintf(num[i], sizeof num[i], "%d", v[i]);
  }
  const char *dir = sp.op == '+' ? "进" : sp.op == '-' ? "退" : "平";
  const char *piece = CN_PIECE[side][sp.type];
  if (!sp.place) {
    snprintf(buf, n, "%s%s%s%s", piece, num[0], dir, num[1]);
    return 0;
  }
  const char *place = sp.place == 1 ? "前" : sp.place == POS_REAR ? "后" : sp.place == POS_MIDDLE
                                                                              ? "中"
                                                                              : CN_NUM[sp.place];
  /* 前炮平五; with doubled pawns on two files the file replaces the piece: 前七进一. */
  snprintf(buf, n, "%s%s%s%s", place, sp.file ? num[0] : piece, dir, num[1]);
  return 0;
}
