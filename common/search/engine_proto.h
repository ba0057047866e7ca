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
typedef struct {
  int64_t nodes, movetime;
  int depth;
  int64_t wtime, btime, winc, binc; /* UCCI's time/increment land in the mover's slot */
  int movestogo;
  bool infinite, ponder;
} xq_go_t;

/* Parses the arguments of `go` for the side to move (UCCI's `time` is that side's clock).
 * Unknown words are an error (XQ_EINVAL with the word in eb), so typos are reported. */
int xq_proto_go(const char *args, xq_proto_t proto, int side, xq_go_t *go, xq_errbuf_t *eb);

/* Milliseconds to think for a clock: a fraction of the remaining time (1/movestogo, or
 * 1/30 without it) plus most of the increment, never more than the time left minus a
 * safety margin. Returns 0 when go has no clock for `side`. */
int64_t xq_proto_time_budget(const xq_go_t *go, int side);

/* Parses setoption arguments: UCI "name N [value V]" or UCCI "N [V]". Copies the name and
 * the value (empty if none) into the buffers, truncating safely. XQ_EINVAL if no name. */
int xq_proto_setoption(const char *args, char *name, size_t name_size, char *value,
                       size_t value_size, xq_errbuf_t *eb);

/* A value in [-1, 1] (side to move's view) as centipawns, the mapping lc0 uses:
 * 111.714640912 * tan(1.5620688421 * v), clipped to +-XQ_PROTO_CP_MAX. */
#define XQ_PROTO_CP_MAX 10000
int xq_proto_value_to_cp(float v);

#endif
