/*
 * game_record.c: the game record, its payload codec and the framed file (game_record.h).
 *
 * Payload (little-endian):
 *   u64 net_id, u8 result, u8 reason, u16 fen_len, u32 nplies, fen_len bytes of FEN,
 *   then per ply: u16 move, u8 flags (bit 0 = full search), and when full:
 *   f32 root value, u16 nvisits, nvisits x (u16 policy index, u32 count).
 */
#include "records/game_record.h"

#include <stdlib.h>
#include <string.h>

#include "rules/fen.h"
#include "rules/movegen.h"
#include "rules/policy_index.h"
#include "support/crc32.h"
#include "support/le.h"

void xq_record_init(xq_game_record_t *r) { memset(r, 0, sizeof *r); }

void xq_record_free(xq_game_record_t *r) {
  free(r->plies);
  free(r->visits);
  xq_record_init(r);
}

void xq_record_reset(xq_game_record_t *r, const char *start_fen, uint64_t net_id) {
  snprintf(r->start_fen, sizeof r->start_fen, "%s", start_fen);
  r->net_id = net_id;
  r->result = XQ_RESULT_NONE;
  r->reason = XQ_REASON_NONE;
  r->nplies = 0;
  r->nvisits = 0;
}

static int grow(void **p, int *cap, int need, size_t elem) {
  if (need <= *cap) return 0;
  int nc = *cap ? *cap : 64;
  while (nc < need) nc *= 2;
  void *q = realloc(*p, (size_t)nc * elem);
  if (!q) return XQ_ENOMEM;
  *p = q;
  *cap = nc;
  return 0;
}

int xq_record_add(xq_game_record_t *r, xq_move_t move, bool full, float value,
                  const xq_visit_t *visits, int n) {
  if (!full) n = 0;
  if (grow((void **)&r->plies, &r->cap_plies, r->nplies + 1, sizeof *r->plies) ||
      grow((void **)&r->visits, &r->cap_visits, r->nvisits + n, sizeof *r->visits))
    return XQ_ENOMEM;
  xq_record_ply_t *p = &r->plies[r->nplies++];
  p->move = move;
  p->full = full;
  p->value = full ? value : 0.0f;
  p->nvisits = n;
  p->visit_off = r->nvisits;
  if (n) memcpy(r->visits + r->nvisits, visits, (size_t)n * sizeof *visits);
  r->nvisits += n;
  return 0;
}

static void put16(unsigned char **p, uint16_t v) {
  (*p)[0] = (unsigned char)v;
  (*p)[1] = (unsigned char)(v >> 8);
  *p += 2;
}

int xq_record_encode(const xq_game_record_t *r, unsigned char **buf, size_t *len) {
  size_t fl = strlen(r->start_fen);
  size_t n = 16 + fl + (size_t)r->nplies * 9 + (size_t)r->nvisits * 6;
  unsigned char *b = malloc(n), *p = b;
  if (!b) return XQ_ENOMEM;
  xq_put_le64(p, r->net_id);
  p += 8;
  *p++ = (unsigned char)r->result;
  *p++ = (unsigned char)r->reason;
  put16(&p, (uint16_t)fl);
  xq_put_le32(p, (uint32_t)r->nplies);
  p += 4;
  memcpy(p, r->start_fen, fl);
  p += fl;
  for (int i = 0; i < r->nplies; i++) {
    const xq_record_ply_t *pl = &r->plies[i];
    put16(&p, pl->move);
    *p++ = pl->full ? 1 : 0;
    if (!pl->full) continue;
    uint32_t bits;
    memcpy(&bits, &pl->value, 4);
    xq_put_le32(p, bits);
    p += 4;
    put16(&p, (uint16_t)pl->nvisits);
    for (int k = 0; k < pl->nvisits; k++) {
      const xq_visit_t *v = &r->visits[pl->visit_off + k];
      put16(&p, v->index);
      xq_put_le32(p, v->count);
      p += 4;
    }
  }
  *buf = b;
  *len = (size_t)(p - b);
  return 0;
}

/* A bounds-checked cursor over the payload. */
typedef struct {
  const unsigned char *p, *end;
} rd_t;

static bool need(rd_t *c, size_t n) { return (size_t)(c->end - c->p) >= n; }
static uint16_t get16(rd_t *c) {
  uint16_t v = (uint16_t)(c->p[0] | c->p[1] << 8);
  c->p += 2;
  return v;
}

int xq_record_decode(xq_game_record_t *r, const unsigned char *buf, size_t len,
                     xq_errbuf_t *eb) {
  rd_t c = {buf, buf + len};
  if (!need(&c, 16)) return xq_err_set(eb, XQ_ETRUNC, "record: %zu bytes, header needs 16", len);
  uint64_t net_id = xq_get_le64(c.p);
  c.p += 8;
  int result = *c.p++, reason = *c.p++;
  uint16_t fl = get16(&c);
  uint32_t nplies = xq_get_le32(c.p);
  c.p += 4;
  if (result > XQ_RESULT_DRAW) return xq_err_set(eb, XQ_EFORMAT, "record: result %d", result);
  if (reason > XQ_REASON_RESIGN) return xq_err_set(eb, XQ_EFORMAT, "record: reason %d", reason);
  if (fl == 0 || fl >= XQ_RECORD_FEN_MAX)
    return xq_err_set(eb, XQ_EFORMAT, "record: FEN length %u", fl);
  if (nplies > XQ_MAX_HISTORY) return xq_err_set(eb, XQ_EFORMAT, "record: %u plies", nplies);
  if (!need(&c, fl)) return xq_err_set(eb, XQ_ETRUNC, "record: FEN truncated");
  char fen[XQ_RECORD_FEN_MAX];
  memcpy(fen, c.p, fl);
  fen[fl] = 0;
  c.p += fl;
  xq_pos_t *pos = malloc(sizeof *pos);
  if (!pos) return XQ_ENOMEM;
  int rc = xq_fen_parse(pos, fen, eb);
  if (rc) goto out;
  xq_record_reset(r, fen, net_id);
  r->result = (xq_result_t)result;
  r->reason = (xq_reason_t)reason;
  xq_visit_t vis[XQ_MAX_MOVES];
  for (uint32_t i = 0; i < nplies; i++) {
    if (!need(&c, 3)) {
      rc = xq_err_set(eb, XQ_ETRUNC, "record: ply %u truncated", i);
      goto out;
    }
    xq_move_t m = get16(&c);
    int flags = *c.p++;
    if (flags & ~1) {
      rc = xq_err_set(eb, XQ_EFORMAT, "record: ply %u flags %#x", i, flags);
      goto out;
    }
    if (!xq_move_is_legal(pos, m)) {
      rc = xq_err_set(eb, XQ_EMOVE, "record: ply %u move %#x is illegal", i, m);
      goto out;
    }
    float value = 0.0f;
    int nv = 0;
    if (flags & 1) {
      if (!need(&c, 6)) {
        rc = xq_err_set(eb, XQ_ETRUNC, "record: ply %u truncated", i);
        goto out;
      }
      uint32_t bits = xq_get_le32(c.p);
      c.p += 4;
      memcpy(&value, &bits, 4);
      nv = get16(&c);
      if (!(value >= -1.0f && value <= 1.0f) || nv > XQ_MAX_MOVES) {
        rc = xq_err_set(eb, XQ_EFORMAT, "record: ply %u value %g or %d visits", i, value, nv);
        goto out;
      }
      if (!need(&c, (size_t)nv * 6)) {
        rc = xq_err_set(eb, XQ_ETRUNC, "record: ply %u visits truncated", i);
        goto out;
      }
      for (int k = 0; k < nv; k++) {
        vis[k].index = get16(&c);
        vis[k].count = xq_get_le32(c.p);
        c.p += 4;
        if (vis[k].index >= XQ_POLICY_SIZE) {
          rc = xq_err_set(eb, XQ_EFORMAT, "record: ply %u policy index %u", i, vis[k].index);
          goto out;
        }
      }
    }
    rc = xq_record_add(r, m, flags & 1, value, vis, nv);
    if (rc) goto out;
    if (pos->ply + 1 >= XQ_MAX_HISTORY) xq_pos_reset_history(pos);
    xq_pos_make(pos, m);
  }
  if (c.p != c.end) rc = xq_err_set(eb, XQ_EFORMAT, "record: %zu trailing bytes",
                                    (size_t)(c.end - c.p));
out:
  free(pos);
  return rc;
}

int xq_record_write_header(FILE *f, xq_errbuf_t *eb) {
  unsigned char h[12];
  memcpy(h, XQ_RECORD_MAGIC, 8);
  xq_put_le32(h + 8, XQ_RECORD_VERSION);
  if (fwrite(h, 1, sizeof h, f) != sizeof h) return xq_err_set(eb, XQ_EIO, "write header");
  return 0;
}

int xq_record_write(FILE *f, const xq_game_record_t *r, xq_errbuf_t *eb) {
  unsigned char *buf;
  size_t len;
  if (xq_record_encode(r, &buf, &len)) return xq_err_set(eb, XQ_ENOMEM, "encode record");
  unsigned char h[8];
  xq_put_le32(h, (uint32_t)len);
  xq_put_le32(h + 4, xq_crc32(0, buf, len));
  int rc = 0;
  if (fwrite(h, 1, 8, f) != 8 || fwrite(buf, 1, len, f) != len)
    rc = xq_err_set(eb, XQ_EIO, "write record");
  free(buf);
  return rc;
}

int xq_record_read_header(FILE *f, xq_errbuf_t *eb) {
  unsigned char h[12];
  size_t n = fread(h, 1, sizeof h, f);
  if (n != sizeof h) return xq_err_set(eb, XQ_ETRUNC, "game file: header truncated (%zu bytes)", n);
  if (memcmp(h, XQ_RECORD_MAGIC, 8)) return xq_err_set(eb, XQ_EFORMAT, "game file: bad magic");
  uint32_t v = xq_get_le32(h + 8);
  if (v != XQ_RECORD_VERSION)
    return xq_err_set(eb, XQ_EVERSION, "game file: version %u, expected %d", v, XQ_RECORD_VERSION);
  return 0;
}

int xq_record_read(FILE *f, xq_game_record_t *r, xq_errbuf_t *eb) {
  unsigned char h[8];
  size_t n = fread(h, 1, 8, f);
  if (n == 0 && feof(f)) return 0;
  if (n != 8) return xq_err_set(eb, XQ_ETRUNC, "game file: record frame truncated");
  uint32_t len = xq_get_le32(h), crc = xq_get_le32(h + 4);
  if (len > XQ_RECORD_MAX_PAYLOAD)
    return xq_err_set(eb, XQ_EFORMAT, "game file: record length %u too large", len);
  unsigned char *buf = malloc(len ? len : 1);
  if (!buf) return xq_err_set(eb, XQ_ENOMEM, "record of %u bytes", len);
  int rc = 0;
  if (fread(buf, 1, len, f) != len) rc = xq_err_set(eb, XQ_ETRUNC, "game file: record truncated");
  else if (xq_crc32(0, buf, len) != crc) rc = xq_err_set(eb, XQ_ECHECKSUM, "game file: record CRC");
  else rc = xq_record_decode(r, buf, len, eb);
  free(buf);
  return rc ? rc : 1;
}
