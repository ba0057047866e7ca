/*
 * engine_proto.c: parsing of UCI / UCCI command lines (see engine_proto.h). Every parser
 * here reads untrusted text from a GUI: it walks the NUL-terminated line token by token,
 * never trusts a length, and reports the first problem with the offending word.
 */
#include "search/engine_proto.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "rules/fen.h"
#include "rules/notation.h"
#include "search/mcts.h"

static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* Returns the next token of *p (skipping blanks) and its length in *len; advances *p past
 * it. Returns NULL at the end of the line. */
static const char *next_token(const char **p, size_t *len) {
  const char *s = *p;
  while (*s && is_blank(*s)) s++;
  if (!*s) {
    *p = s;
    *len = 0;
    return NULL;
  }
  const char *e = s;
  while (*e && !is_blank(*e)) e++;
  *p = e;
  *len = (size_t)(e - s);
  return s;
}

static bool tok_is(const char *t, size_t len, const char *word) {
  return t && strlen(word) == len && !memcmp(t, word, len);
}

xq_cmd_t xq_proto_command(const char *line, const char **args) {
  static const struct {
    const char *word;
    xq_cmd_t cmd;
  } table[] = {
      {"uci", XQ_CMD_UCI},           {"ucci", XQ_CMD_UCCI},         {"isready", XQ_CMD_ISREADY},
      {"setoption", XQ_CMD_SETOPTION}, {"ucinewgame", XQ_CMD_NEWGAME}, {"position", XQ_CMD_POSITION},
      {"go", XQ_CMD_GO},             {"stop", XQ_CMD_STOP},         {"ponderhit", XQ_CMD_PONDERHIT},
      {"quit", XQ_CMD_QUIT},         {"debug", XQ_CMD_DEBUG},
  };
  const char *p = line;
  size_t len;
  const char *t = next_token(&p, &len);
  while (*p && is_blank(*p)) p++;
  *args = p;
  if (!t) return XQ_CMD_EMPTY;
  for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
    if (tok_is(t, len, table[i].word)) return table[i].cmd;
  return XQ_CMD_UNKNOWN;
}

/* Copies a token into buf as a C string for error messages, shortened if long. */
static const char *tok_str(const char *t, size_t len, char *buf, size_t size) {
  if (len >= size) len = size - 1;
  memcpy(buf, t, len);
  buf[len] = 0;
  return buf;
}

int xq_proto_position(xq_pos_t *pos, const char *args, xq_errbuf_t *eb) {
  char word[32];
  const char *p = args;
  size_t len;
  const char *t = next_token(&p, &len);
  xq_pos_t *tmp = malloc(sizeof *tmp);
  if (!tmp) return xq_err_set(eb, XQ_ENOMEM, "out of memory");
  int rc = 0;
  if (tok_is(t, len, "startpos")) {
    xq_pos_startpos(tmp);
  } else if (tok_is(t, len, "fen")) {
    /* The FEN is every word up to "moves" or the end of the line. */
    const char *start = p, *end = p, *q = p;
    size_t n;
    const char *w;
    while ((w = next_token(&q, &n)) && !tok_is(w, n, "moves")) end = w + n;
    while (start < end && is_blank(*start)) start++;
    char fen[256];
    if (end <= start) {
      rc = xq_err_set(eb, XQ_EFEN, "position fen: no FEN given");
      goto out;
    }
    if ((size_t)(end - start) >= sizeof fen) {
      rc = xq_err_set(eb, XQ_EFEN, "position fen: FEN too long (%zu characters)",
                      (size_t)(end - start));
      goto out;
    }
    memcpy(fen, start, (size_t)(end - start));
    fen[end - start] = 0;
    xq_errbuf_t feb = {{0}};
    if (xq_fen_parse(tmp, fen, &feb)) {
      rc = xq_err_set(eb, XQ_EFEN, "bad FEN: %s", feb.msg);
      goto out;
    }
    p = end;
  } else {
    rc = xq_err_set(eb, XQ_EFEN, "position: expected 'startpos' or 'fen', got '%s'",
                    t ? tok_str(t, len, word, sizeof word) : "");
    goto out;
  }
  t = next_token(&p, &len);
  if (t) {
    if (!tok_is(t, len, "moves")) {
      rc = xq_err_set(eb, XQ_EMOVE, "position: expected 'moves', got '%s'",
                      tok_str(t, len, word, sizeof word));
      goto out;
    }
    int index = 0;
    while ((t = next_token(&p, &len))) {
      index++;
      xq_move_t m;
      xq_errbuf_t meb = {{0}};
      tok_str(t, len, word, sizeof word);
      if (len != 4 || xq_move_parse_legal(tmp, word, &m, &meb)) {
        rc = xq_err_set(eb, XQ_EMOVE, "illegal move %d '%s': %s", index, word,
                        len != 4 ? "not 4 ICCS characters" : meb.msg);
        goto out;
      }
      if (tmp->ply >= XQ_MAX_HISTORY) {
        rc = xq_err_set(eb, XQ_EMOVE, "too many moves (history holds %d plies)",
                        XQ_MAX_HISTORY);
        goto out;
      }
      xq_pos_make(tmp, m);
    }
  }
  memcpy(pos, tmp, sizeof *pos);
out:
  free(tmp);
  return rc;
}

/* Parses an integer token into *out (any sign; the caller checks the bounds). */
static int tok_int(const char *t, size_t len, int64_t *out) {
  char buf[32];
  if (!t || len == 0 || len >= sizeof buf) return -1;
  tok_str(t, len, buf, sizeof buf);
  char *end;
  errno = 0;
  long long v = strtoll(buf, &end, 10);
  if (errno || *end) return -1;
  *out = v;
  return 0;
}

/* True when the token has the shape of an ICCS move (a-i, 0-9, a-i, 0-9). */
static bool tok_is_move(const char *t, size_t len) {
  return len == 4 && t[0] >= 'a' && t[0] <= 'i' && t[1] >= '0' && t[1] <= '9' && t[2] >= 'a' &&
         t[2] <= 'i' && t[3] >= '0' && t[3] <= '9';
}

int xq_proto_go(const char *args, xq_proto_t proto, int side, xq_go_t *go, xq_errbuf_t *eb) {
  char word[32], val[32];
  *go = (xq_go_t){.nodes = -1, .movetime = -1, .depth = -1, .wtime = -1, .btime = -1,
                  .winc = -1, .binc = -1, .movestogo = -1};
  const char *p = args;
  size_t len;
  const char *t;
  while ((t = next_token(&p, &len))) {
    if (tok_is(t, len, "infinite")) {
      go->infinite = true;
      continue;
    }
    if (tok_is(t, len, "ponder")) {
      go->ponder = true;
      continue;
    }
    if (tok_is(t, len, "draw")) continue; /* UCCI: the opponent offers a draw; we play on */
    if (tok_is(t, len, "searchmoves")) {
      /* The moves run up to the next word that is not one. */
      const char *q = p, *m;
      size_t n;
      while ((m = next_token(&q, &n)) && tok_is_move(m, n)) {
        if (go->nsearchmoves < XQ_MAX_MOVES) {
          xq_errbuf_t meb = {{0}};
          if (xq_move_parse(tok_str(m, n, word, sizeof word), &go->searchmoves[go->nsearchmoves], &meb))
            return xq_err_set(eb, XQ_EINVAL, "go: searchmoves: bad move '%s'", word);
          go->nsearchmoves++;
        }
        p = q;
      }
      if (go->nsearchmoves == 0)
        return xq_err_set(eb, XQ_EINVAL, "go: searchmoves needs ICCS moves (e.g. h2e2)");
      continue;
    }
    if (tok_is(t, len, "mate"))
      return xq_err_set(eb, XQ_EINVAL, "go: mate is not supported (an MCTS engine proves no "
                                       "mates; use depth, nodes or movetime)");
    int64_t *slot = NULL, tmp = 0;
    int kind = 0; /* 1: depth, 2: movestogo, 3: a clock (negative reads as 0), 4: at least 1 */
    if (tok_is(t, len, "nodes")) slot = &go->nodes, kind = 4;
    else if (tok_is(t, len, "movetime")) slot = &go->movetime, kind = 4;
    else if (tok_is(t, len, "depth")) slot = &tmp, kind = 1;
    else if (tok_is(t, len, "movestogo")) slot = &tmp, kind = 2;
    else if (tok_is(t, len, "wtime")) slot = &go->wtime, kind = 3;
    else if (tok_is(t, len, "btime")) slot = &go->btime, kind = 3;
    else if (tok_is(t, len, "winc")) slot = &go->winc, kind = 3;
    else if (tok_is(t, len, "binc")) slot = &go->binc, kind = 3;
    else if (proto == XQ_PROTO_UCCI && tok_is(t, len, "time"))
      slot = side == XQ_RED ? &go->wtime : &go->btime, kind = 3;
    else if (proto == XQ_PROTO_UCCI && tok_is(t, len, "increment"))
      slot = side == XQ_RED ? &go->winc : &go->binc, kind = 3;
    else if (proto == XQ_PROTO_UCCI && (tok_is(t, len, "opptime") || tok_is(t, len, "oppmovestogo") ||
                                        tok_is(t, len, "oppincrement")))
      slot = &tmp; /* the opponent's clock: parsed and ignored */
    else
      return xq_err_set(eb, XQ_EINVAL, "go: unknown parameter '%s'",
                        tok_str(t, len, word, sizeof word));
    tok_str(t, len, word, sizeof word);
    const char *v = next_token(&p, &len);
    if (tok_int(v, len, slot))
      return xq_err_set(eb, XQ_EINVAL, "go: '%s' needs a whole number%s%s%s", word,
                        v ? " (got '" : "", v ? tok_str(v, len, val, sizeof val) : "", v ? "')" : "");
    if (kind == 3 && *slot < 0) *slot = 0; /* some GUIs send negative clocks when flagging */
    if ((kind == 1 || kind == 2 || kind == 4) && *slot < 1)
      return xq_err_set(eb, XQ_ERANGE, "go: %s %lld: must be at least 1%s", word, (long long)*slot,
                        !strcmp(word, "movetime") ? " (milliseconds)" : "");
    if (kind == 1) go->depth = tmp > XQ_PROTO_DEPTH_MAX ? XQ_PROTO_DEPTH_MAX : (int)tmp;
    if (kind == 2) go->movestogo = tmp > 1000 ? 1000 : (int)tmp;
  }
  return 0;
}

int64_t xq_proto_think_ms(const xq_go_t *go, int side, int64_t overhead_ms) {
  int64_t ms = go->movetime > 0 ? go->movetime : xq_proto_time_budget(go, side);
  if (ms <= 0) return 0;
  ms -= overhead_ms > 0 ? overhead_ms : 0;
  return ms < 1 ? 1 : ms;
}

int64_t xq_proto_depth_nodes(int depth) {
  if (depth < 1) depth = 1;
  return depth >= 36 ? (int64_t)1 << 40 : (int64_t)1 << (depth + 4);
}

int64_t xq_proto_time_budget(const xq_go_t *go, int side) {
  int64_t left = side == XQ_RED ? go->wtime : go->btime;
  int64_t inc = side == XQ_RED ? go->winc : go->binc;
  if (left < 0) return 0;
  if (inc < 0) inc = 0;
  int64_t moves = go->movestogo > 0 ? go->movestogo : 30;
  int64_t budget = left / moves + inc * 3 / 4;
  /* Keep a margin for process, pipe and GUI latency: 50 ms plus 5% of the clock, at most
   * a tenth of it (so a nearly flagged clock still gets a move). */
  int64_t margin = 50 + left / 20;
  if (margin > left / 10) margin = left / 10;
  if (budget > left - margin) budget = left - margin;
  return budget < 1 ? 1 : budget;
}

int xq_proto_setoption(const char *args, char *name, size_t name_size, char *value,
                       size_t value_size, xq_errbuf_t *eb) {
  const char *p = args, *t;
  size_t len;
  name[0] = value[0] = 0;
  t = next_token(&p, &len);
  const char *name_start, *name_end, *value_start = NULL, *value_end = NULL;
  if (tok_is(t, len, "name")) {
    /* UCI: the name runs up to "value" (names may hold spaces). */
    const char *q = p, *w;
    size_t n;
    name_start = NULL;
    name_end = NULL;
    while ((w = next_token(&q, &n)) && !tok_is(w, n, "value")) {
      if (!name_start) name_start = w;
      name_end = w + n;
    }
    if (w) {
      while (*q && is_blank(*q)) q++;
      value_start = q;
      value_end = q + strlen(q);
    }
  } else {
    /* UCCI: setoption NAME [VALUE...]. */
    name_start = t;
    name_end = t ? t + len : NULL;
    while (*p && is_blank(*p)) p++;
    value_start = p;
    value_end = p + strlen(p);
  }
  if (!name_start) return xq_err_set(eb, XQ_EINVAL, "setoption: no option name");
  while (value_end && value_end > value_start && is_blank(value_end[-1])) value_end--;
  tok_str(name_start, (size_t)(name_end - name_start), name, name_size);
  if (value_start) tok_str(value_start, (size_t)(value_end - value_start), value, value_size);
  return 0;
}

int xq_proto_value_to_cp(float v) {
  if (!(v == v)) return 0; /* NaN: say nothing rather than something wrong */
  double x = v > 1 ? 1 : v < -1 ? -1 : v;
  double cp = 111.714640912 * tan(1.5620688421 * x);
  if (cp > XQ_PROTO_CP_MAX) cp = XQ_PROTO_CP_MAX;
  if (cp < -XQ_PROTO_CP_MAX) cp = -XQ_PROTO_CP_MAX;
  return (int)lround(cp);
}

/* Threads: threads sharing one tree, each with its own single-threaded net (cmd_engine.c).
 * Hash: MB for the search tree's node pool (3/4) and the evaluation cache (1/4, shared out
 * among the threads); a search stops when the pool is full. MoveOverhead: ms kept back
 * from every time limit. Simulations: the size
 * of a `go` without limits. Temperature: 0 plays the most visited move; above 0 a move is
 * drawn with probability proportional to visits^(1/T). Precision: the net's arithmetic (auto:
 * bf16 where the CPU has avx512_bf16); its advertised default is the engine's start value. */
const xq_proto_option_t xq_proto_options[XQ_OPT_COUNT] = {
    [XQ_OPT_THREADS] = {"Threads", "threads", XQ_OPT_SPIN, false, 1, 1, XQ_MCTS_MAX_THREADS, NULL, NULL, "", 0},
    [XQ_OPT_HASH] = {"Hash", "hashsize", XQ_OPT_SPIN, false, 256, 1, 65536, NULL, NULL, "MB", 0},
    [XQ_OPT_MULTIPV] = {"MultiPV", NULL, XQ_OPT_SPIN, false, 1, 1, XQ_MAX_MOVES, NULL, NULL, "", 0},
    [XQ_OPT_WEIGHTS_FILE] = {"WeightsFile", NULL, XQ_OPT_STRING, false, 0, 0, 0, "", NULL, "", 0},
    [XQ_OPT_SIMULATIONS] = {"Simulations", NULL, XQ_OPT_SPIN, false, 800, 1, 100000000, NULL, NULL,
                            "", 0},
    [XQ_OPT_TEMPERATURE] = {"Temperature", NULL, XQ_OPT_STRING, true, 0, 0, 10, "0", NULL, "", 0},
    [XQ_OPT_VARIANT] = {"UCI_Variant", NULL, XQ_OPT_COMBO, false, 0, 0, 0, "xiangqi", "xiangqi", "",
                        1},
    [XQ_OPT_PROTOCOL] = {"Protocol", NULL, XQ_OPT_COMBO, false, 0, 0, 0, "uci", "uci ucci", "", -1},
    [XQ_OPT_USEMILLISEC] = {"usemillisec", NULL, XQ_OPT_CHECK, false, 0, 0, 0, "true", NULL, "", 2},
    [XQ_OPT_NEWGAME] = {"newgame", NULL, XQ_OPT_BUTTON, false, 0, 0, 0, NULL, NULL, "", 2},
    [XQ_OPT_PONDER] = {"Ponder", NULL, XQ_OPT_CHECK, false, 0, 0, 0, "false", NULL, "", 1},
    [XQ_OPT_MOVE_OVERHEAD] = {"MoveOverhead", NULL, XQ_OPT_SPIN, false, 30, 0, 5000, NULL, NULL, "ms", 0},
    [XQ_OPT_PRECISION] = {"Precision", NULL, XQ_OPT_COMBO, false, 0, 0, 0, "", "auto fp32 bf16", "", 0},
};

int xq_proto_option_find(const char *name) {
  for (int i = 0; i < XQ_OPT_COUNT; i++) {
    const xq_proto_option_t *o = &xq_proto_options[i];
    if (!strcasecmp(name, o->name) || (o->alias && !strcasecmp(name, o->alias))) return i;
  }
  return -1;
}

static const char *const opt_type_names[] = {"spin", "check", "string", "combo", "button"};

/* Appends a combo's " var V" list to buf (len bytes used); returns the new length. */
static size_t option_vars(const xq_proto_option_t *o, char *buf, size_t size, size_t len) {
  if (o->type != XQ_OPT_COMBO || !o->vars) return len;
  const char *v = o->vars;
  while (*v && len < size) {
    size_t w = strcspn(v, " ");
    len += (size_t)snprintf(buf + len, size - len, " var %.*s", (int)w, v);
    v += w;
    v += strspn(v, " ");
  }
  return len;
}

bool xq_proto_option_line(const xq_proto_option_t *o, xq_proto_t proto, const char *def,
                          char *buf, size_t size) {
  if (o->hidden < 0 || (o->hidden == 1 && proto != XQ_PROTO_UCI) ||
      (o->hidden == 2 && proto != XQ_PROTO_UCCI))
    return false;
  /* UCI: "option name N type T default D [min m max M] [var V...]"; UCCI puts the name
   * without the keyword and the bounds before the default, as its spec shows. */
  const char *name = proto == XQ_PROTO_UCCI && o->alias ? o->alias : o->name;
  int n = proto == XQ_PROTO_UCI ? snprintf(buf, size, "option name %s type %s", name, opt_type_names[o->type])
                                : snprintf(buf, size, "option %s type %s", name, opt_type_names[o->type]);
  size_t len = n > 0 ? (size_t)n : 0;
  if (o->type == XQ_OPT_BUTTON) return true; /* a button has no default */
  const char *d = o->def_str;
  if ((o->type == XQ_OPT_STRING || o->type == XQ_OPT_COMBO) && d && !*d && def) d = def;
  char num[64];
  if (o->type == XQ_OPT_SPIN) {
    snprintf(num, sizeof num, "%.0f", o->def);
    d = num;
  }
  /* UCCI puts a spin's bounds and a combo's values before the default (its spec's
   * `option style type combo var solid var normal var risky default normal`); UCI after. */
  if (len < size && o->type == XQ_OPT_SPIN && proto == XQ_PROTO_UCCI)
    len += (size_t)snprintf(buf + len, size - len, " min %.0f max %.0f", o->min, o->max);
  if (proto == XQ_PROTO_UCCI) len = option_vars(o, buf, size, len);
  if (len < size) len += (size_t)snprintf(buf + len, size - len, " default %s", d && *d ? d : "<empty>");
  if (len < size && o->type == XQ_OPT_SPIN && proto == XQ_PROTO_UCI)
    len += (size_t)snprintf(buf + len, size - len, " min %.0f max %.0f", o->min, o->max);
  if (proto == XQ_PROTO_UCI) option_vars(o, buf, size, len);
  return true;
}

int xq_proto_option_number(const xq_proto_option_t *o, const char *value, double *out,
                           xq_errbuf_t *eb) {
  assert(o->type == XQ_OPT_SPIN || o->number);
  char *end;
  errno = 0;
  double v = strtod(value, &end);
  bool integral = o->type != XQ_OPT_SPIN || v == floor(v);
  if (!*value || errno || *end || !(v >= o->min && v <= o->max) || !integral) {
    return xq_err_set(eb, XQ_ERANGE, "option %s: '%s' is not %s from %.15g to %.15g%s%s", o->name,
                      value, o->type == XQ_OPT_SPIN ? "a whole number" : "a number", o->min,
                      o->max, *o->unit ? " " : "", o->unit);
  }
  *out = v;
  return 0;
}

int xq_proto_option_check(const xq_proto_option_t *o, const char *value, bool *out,
                          xq_errbuf_t *eb) {
  if (!strcasecmp(value, "true")) *out = true;
  else if (!strcasecmp(value, "false")) *out = false;
  else return xq_err_set(eb, XQ_EINVAL, "option %s: '%s' is not true or false", o->name, value);
  return 0;
}
