/*
 * board.h: squares, pieces, moves and the position (xq_pos_t) with make/unmake.
 *
 * Name prefixes: xq_sq_ (squares), xq_pc_ (pieces), xq_mv_ (moves), xq_pos_ (positions).
 *
 * Squares are 0..89: sq = rank * 9 + file, file 0..8 = a..i, rank 0..9 counted from Red's
 * side (ICCS coordinates: "a0" is square 0, "i9" is 89). Red moves first and sits on
 * ranks 0..4; the river lies between ranks 4 and 5.
 *
 * A piece is colour * 8 + type (types 1..7 below), 0 is an empty square; so Red's pieces
 * are 1..7 and Black's 9..15. A move is a 16-bit integer from | to << 7 (0 = no move).
 *
 * The position keeps a stack of per-ply state (key, captured piece, no-capture counter,
 * whether the move gave check); the same stack is the repetition history used by
 * rules.h. Ownership: xq_pos_t is a plain value the caller owns; copying it copies the
 * whole game history.
 */
#ifndef XQ_BOARD_H
#define XQ_BOARD_H

#include <stdbool.h>
#include <stdint.h>

#define XQ_FILES 9
#define XQ_RANKS 10
#define XQ_SQUARES 90
#define XQ_MAX_MOVES 128   /* more than any legal position can have (the max is < 120) */
#define XQ_MAX_HISTORY 1024 /* plies of history a position can hold */

enum { XQ_RED = 0, XQ_BLACK = 1 };

enum {
  XQ_EMPTY = 0,
  XQ_KING = 1,
  XQ_ADVISOR = 2,
  XQ_ELEPHANT = 3,
  XQ_HORSE = 4,
  XQ_ROOK = 5,
  XQ_CANNON = 6,
  XQ_PAWN = 7,
};

typedef uint16_t xq_move_t;

static inline int xq_sq(int file, int rank) { return rank * XQ_FILES + file; }
static inline int xq_sq_file(int sq) { return sq % XQ_FILES; }
static inline int xq_sq_rank(int sq) { return sq / XQ_FILES; }
static inline int xq_pc_make(int colour, int type) { return colour * 8 + type; }
static inline int xq_pc_colour(int pc) { return pc >> 3; }
static inline int xq_pc_type(int pc) { return pc & 7; }
static inline xq_move_t xq_mv_make(int from, int to) { return (xq_move_t)(from | to << 7); }
static inline int xq_mv_from(xq_move_t m) { return m & 127; }
static inline int xq_mv_to(xq_move_t m) { return m >> 7; }

/* One ply of history: what make needs to undo, plus what the rules need to adjudicate. */
typedef struct {
  uint64_t key;      /* Zobrist key of the position *before* this move */
  xq_move_t move;    /* the move made */
  uint8_t captured;  /* piece captured by it, or 0 */
  uint8_t check;     /* 1 if the move left the opponent in check */
  uint16_t rule60;   /* no-capture ply counter before the move */
} xq_undo_t;

typedef struct {
  uint8_t board[XQ_SQUARES]; /* piece on each square, 0 = empty */
  uint8_t king[2];           /* square of each side's king */
  uint8_t count[16];         /* number of each piece on the board */
  uint8_t side;              /* side to move: XQ_RED or XQ_BLACK */
  uint8_t in_check;          /* side to move is in check (kept by make/unmake) */
  uint16_t rule60;           /* plies since the last capture (FEN halfmove field) */
  uint16_t fullmove;         /* FEN fullmove number at the start of the history */
  uint16_t ply;              /* plies made since the position was set (history depth) */
  uint64_t key;              /* Zobrist key of the current position */
  xq_undo_t hist[XQ_MAX_HISTORY];
} xq_pos_t;

/* Zobrist keys (zobrist.c): filled by a fixed seed at first use, same on every host. The
 * key of the side to move (Black); the piece keys are internal to the rules (tables.h). */
uint64_t xq_zobrist_side(void);
/* Recomputes the key from scratch; tests compare it with the incremental key. */
uint64_t xq_pos_compute_key(const xq_pos_t *pos);

/* Clears pos to an empty board, Red to move, no history. */
void xq_pos_clear(xq_pos_t *pos);
/* Sets the standard start position. */
void xq_pos_startpos(xq_pos_t *pos);
/* Puts or removes a piece, keeping key, counts and king squares; for setup code only. */
void xq_pos_put(xq_pos_t *pos, int sq, int pc);

/* Makes a legal (or at least pseudo-legal) move. Asserts there is room in the history.
 * Updates in_check for the side now to move. */
void xq_pos_make(xq_pos_t *pos, xq_move_t m);
/* Takes back the last move made. */
void xq_pos_unmake(xq_pos_t *pos);

/* Forgets the history, keeping the current position (the start of a new game record). */
void xq_pos_reset_history(xq_pos_t *pos);

/* Fullmove number as FEN prints it for the current position. */
int xq_pos_fullmove(const xq_pos_t *pos);

#define XQ_START_FEN "rnbakabnr/9/1c5c1/p1p1p1p1p/9/9/P1P1P1P1P/1C5C1/9/RNBAKABNR w - - 0 1"

#endif
