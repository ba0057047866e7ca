/*
 * engine_proto.h: the text side of the UCI / UCCI engine protocols, kept apart from the
 * search and its threads so it can be tested without a network.
 *
 * Both protocols name moves in ICCS coordinates ("h2e2", ranks 0-9 from Red's side, as
 * Pikafish and Xiangqi GUIs use). The differences handled here: UCCI answers `ucciok`,
 * says `nobestmove` when there is no move and `bye` on quit, writes `setoption NAME VALUE`
 * without the `name`/`value` keywords, and gives clocks as `go time T increment I
 * movestogo M` instead of `wtime/btime/winc/binc`.
 *
 * Name prefix: xq_proto_. Nothing here allocates except xq_proto_position (one scratch
 * position, freed before it returns); no function keeps a pointer to its arguments.
 */
#ifndef XQ_ENGINE_PROTO_H
#define XQ_ENGINE_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "rules/board.h"
#include "support/error.h"

typedef enum { XQ_PROTO_UCI = 0, XQ_PROTO_UCCI = 1 } xq_proto_t;

typedef enum {
  XQ_CMD_EMPTY = 0, /* blank line: ignored */
  XQ_CMD_UNKNOWN,
  XQ_CMD_UCI,
  XQ_CMD_UCCI,
  XQ_CMD_ISREADY,
  XQ_CMD_SETOPTION,
  XQ_CMD_NEWGAME,   /* ucinewgame */
  XQ_CMD_POSITION,
  XQ_CMD_GO,
  XQ_CMD_STOP,
  XQ_CMD_PONDERHIT,
  XQ_CMD_QUIT,
  XQ_CMD_DEBUG,     /* `debug on|off`: accepted and ignored */
} xq_cmd_t;

/* Splits line into its command and the rest. *args points into line, past the command
 * word and the blanks after it (never NULL). Commands are case-sensitive, as in the
 * protocols; a trailing '\r' or '\n' is ignored. */
xq_cmd_t xq_proto_command(const char *line, const char **args);

/* Sets pos from the arguments of `position`: "startpos|fen FEN [moves M1 M2 ...]".
 * On success pos holds the position with the moves made (so the repetition history is
 * there). On error returns XQ_EFEN or XQ_EMOVE with the reason in eb and leaves pos as
 * it was. */
int xq_proto_position(xq_pos_t *pos, const char *args, xq_errbuf_t *eb);

/* The limits of one `go`. Times are in milliseconds; -1 means not given. */
#define XQ_PROTO_DEPTH_MAX 1000
typedef struct {
  int64_t nodes, movetime;
  int depth;
  int64_t wtime, btime, winc, binc; /* UCCI's time/increment land in the mover's slot */
  int movestogo;
  bool infinite, ponder;
  int nsearchmoves;                  /* UCI's searchmoves, checked for syntax only (the */
  xq_move_t searchmoves[XQ_MAX_MOVES]; /* engine checks them against the position) */
} xq_go_t;

/* Parses the arguments of `go` for the side to move (UCCI's `time` is that side's clock).
 * Every problem is an error (XQ_EINVAL, or XQ_ERANGE for a value out of bounds) whose
 * message names the word: an unknown parameter, a missing value, `nodes`, `movetime`,
 * `depth` or `movestogo` below 1 (`go movetime -5` and `go nodes 0` are refused, never
 * run as another search), a move after `searchmoves` that is not ICCS, and `mate` (an
 * MCTS engine proves no mates: refused, rather than searched as something else). A
 * negative clock or increment is read as 0 (GUIs send them when a side flags). */
int xq_proto_go(const char *args, xq_proto_t proto, int side, xq_go_t *go, xq_errbuf_t *eb);

/* Milliseconds to think for a clock: a fraction of the remaining time (1/movestogo, or
 * 1/30 without it) plus 3/4 of the increment, never more than the time left minus a
 * safety margin (50 ms + 5% of the time left, at most a tenth of it). Returns 0 when go
 * has no clock for `side`. */
int64_t xq_proto_time_budget(const xq_go_t *go, int side);

/* Milliseconds the search may run for go: movetime, or the clock's budget, less
 * overhead_ms (the MoveOverhead option: pipe, process and GUI latency), at least 1.
 * Returns 0 when go has neither (no time limit). */
int64_t xq_proto_think_ms(const xq_go_t *go, int side, int64_t overhead_ms);

/* The simulations `go depth N` may spend at most: 2^(N+4) (32 at depth 1, 8192 at depth 9,
 * 65536 at depth 12), capped at 2^40. The search ends when its principal variation is N
 * moves long or when it has spent these, whichever comes first (docs/engine.md): a depth
 * search always ends, even where the line never grows. */
int64_t xq_proto_depth_nodes(int depth);

/* Parses setoption arguments: UCI "name N [value V]" or UCCI "N [V]". Copies the name and
 * the value (empty if none) into the buffers, truncating safely. XQ_EINVAL if no name. */
int xq_proto_setoption(const char *args, char *name, size_t name_size, char *value,
                       size_t value_size, xq_errbuf_t *eb);

/* The options the engine advertises in answer to `uci` / `ucci`: one table gives the
 * advertised line, the validation and the docs (docs/engine.md). Names are matched without
 * regard to case, as UCI asks, and UCCI's spellings (hashsize, threads) are aliases. */
typedef enum {
  XQ_OPT_THREADS = 0,
  XQ_OPT_HASH,
  XQ_OPT_MULTIPV,
  XQ_OPT_WEIGHTS_FILE,
  XQ_OPT_SIMULATIONS,
  XQ_OPT_TEMPERATURE,
  XQ_OPT_VARIANT,      /* UCI_Variant: only xiangqi */
  XQ_OPT_PROTOCOL,     /* Fairy-Stockfish's ICCS switch: we always speak ICCS */
  XQ_OPT_USEMILLISEC,  /* UCCI: clock values in milliseconds (always) */
  XQ_OPT_NEWGAME,      /* UCCI: a button that empties the tree (as ucinewgame) */
  XQ_OPT_PONDER,       /* UCI: the GUI may send `go ponder` (always possible) */
  XQ_OPT_MOVE_OVERHEAD, /* ms kept back from every time limit for latency */
  XQ_OPT_PRECISION,     /* the net's arithmetic: auto, fp32 or bf16 (nn_bf16.h) */
  XQ_OPT_COUNT
} xq_opt_id_t;

typedef enum { XQ_OPT_SPIN, XQ_OPT_CHECK, XQ_OPT_STRING, XQ_OPT_COMBO, XQ_OPT_BUTTON } xq_opt_type_t;

typedef struct {
  const char *name;     /* as advertised to UCI */
  const char *alias;    /* UCCI's spelling, also accepted in UCI (NULL = none) */
  xq_opt_type_t type;
  bool number;          /* a string that holds a decimal number within [min, max] */
  double def, min, max; /* spin and number options */
  const char *def_str;  /* string / combo / check default ("" = set by the engine) */
  const char *vars;     /* combo values, space-separated */
  const char *unit;     /* for messages ("MB"), may be "" */
  int hidden;           /* 1: advertised only to UCI, 2: only to UCCI, -1: accepted, never
                         * advertised, 0: both */
} xq_proto_option_t;

extern const xq_proto_option_t xq_proto_options[XQ_OPT_COUNT];

/* The option called name (or its alias), any case; -1 if there is none. */
int xq_proto_option_find(const char *name);

/* Writes the `option ...` line that advertises o in proto into buf (no newline). A string
 * option whose table default is "" shows def instead (e.g. the net loaded). Returns false
 * when o is not advertised in proto. */
bool xq_proto_option_line(const xq_proto_option_t *o, xq_proto_t proto, const char *def,
                          char *buf, size_t size);

/* Parses value for a spin or number option: XQ_ERANGE naming the option and its bounds
 * when it is not a number or lies outside them. */
int xq_proto_option_number(const xq_proto_option_t *o, const char *value, double *out,
                           xq_errbuf_t *eb);

/* Parses a check option's value ("true"/"false", any case). XQ_EINVAL otherwise. */
int xq_proto_option_check(const xq_proto_option_t *o, const char *value, bool *out,
                          xq_errbuf_t *eb);

/* A value in [-1, 1] (side to move's view) as centipawns, the mapping lc0 uses:
 * 111.714640912 * tan(1.5620688421 * v), clipped to +-XQ_PROTO_CP_MAX. */
#define XQ_PROTO_CP_MAX 10000
int xq_proto_value_to_cp(float v);

#endif
