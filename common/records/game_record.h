/*
 * game_record.h: one self-play game as the trainer needs it: start FEN, moves, and for
 * every position that got a full search the sparse root visit counts (policy index as
 * seen by the side to move, count) and the root value; the result, the end reason and
 * the id of the net that played. docs/game-records.md gives the file format:
 *
 *   file   = magic "XQZG\r\n\x1a\n" (8 bytes), version u32 (1), then records
 *   record = payload length u32, CRC-32 of the payload u32, payload
 *
 * Every integer is little-endian. The reader trusts no length field, replays every move
 * with the rules and names the first problem it finds; it never crashes on any input.
 * Ownership: xq_game_record_t owns its arrays; init before use, free when done.
 */
#ifndef XQ_GAME_RECORD_H
#define XQ_GAME_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "rules/board.h"
#include "rules/rules.h"
#include "support/error.h"

#define XQ_RECORD_MAGIC "XQZG\r\n\x1a\n"
#define XQ_RECORD_VERSION 1
#define XQ_RECORD_MAX_PAYLOAD (1u << 24)
#define XQ_RECORD_FEN_MAX 128

typedef struct {
  uint16_t index; /* policy index, side to move's view */
  uint32_t count; /* root visits */
} xq_visit_t;

typedef struct {
  xq_move_t move;
  bool full;       /* full search: a policy target (visits and value recorded) */
  float value;     /* root value, side to move's view (full searches only) */
  int nvisits;     /* visit entries of this ply */
  int visit_off;   /* first entry in the record's visits[] */
} xq_record_ply_t;

typedef struct {
  char start_fen[XQ_RECORD_FEN_MAX];
  uint64_t net_id;
  xq_result_t result;
  xq_reason_t reason;
  int nplies;
  xq_record_ply_t *plies; /* (nplies) */
  int nvisits;
  xq_visit_t *visits;     /* (nvisits) */
  int cap_plies, cap_visits;
} xq_game_record_t;

void xq_record_init(xq_game_record_t *r);
void xq_record_free(xq_game_record_t *r);
/* Empties r for a new game from start_fen. */
void xq_record_reset(xq_game_record_t *r, const char *start_fen, uint64_t net_id);
/* Appends a ply; visits (n entries) are kept only when full. 0 or XQ_ENOMEM. */
int xq_record_add(xq_game_record_t *r, xq_move_t move, bool full, float value,
                  const xq_visit_t *visits, int n);
/* Serialises the payload into a malloc'd buffer the caller frees. */
int xq_record_encode(const xq_game_record_t *r, unsigned char **buf, size_t *len);
/* Parses and validates a payload (moves replayed with the rules). */
int xq_record_decode(xq_game_record_t *r, const unsigned char *buf, size_t len,
                     xq_errbuf_t *eb);
/* Writes the file header. */
int xq_record_write_header(FILE *f, xq_errbuf_t *eb);
/* Appends one framed record. */
int xq_record_write(FILE *f, const xq_game_record_t *r, xq_errbuf_t *eb);
/* Reads and checks the file header. */
int xq_record_read_header(FILE *f, xq_errbuf_t *eb);
/* Reads the next record: 1 when one was read, 0 at a clean end of file, or an error. */
int xq_record_read(FILE *f, xq_game_record_t *r, xq_errbuf_t *eb);

#endif
