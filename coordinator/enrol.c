/*
 * enrol.c: one-time enrolment tokens (see enrol.h). The token's text is never stored or
 * logged: the database and the log hold its hash (the log only the first 8 hex digits).
 */
#include "enrol.h"

#include <ctype.h>
#include <errno.h>
#include <sodium.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <zmq.h>

#include "commands.h"
#include "coord.h"
#include "support/atomic_file.h"
#include "support/log.h"
#include "wire/join_command.h"
#include "wire/messages.h"

#define COMP "enrol"

/* Domain separation for the hash: a token's hash here is no other protocol's hash. */
static const char k_hash_key[] = "xqzero enrolment token, BLAKE2b-256, v1";

static const char k_schema[] =
    "CREATE TABLE IF NOT EXISTS enrol_tokens(hash BLOB PRIMARY KEY, created INTEGER NOT NULL,"
    " expires INTEGER NOT NULL, used_at INTEGER, used_by_key TEXT, key_file TEXT)";

void xqc_enrol_hash(const uint8_t token[XQC_ENROL_TOKEN_BYTES],
                    uint8_t out[XQC_ENROL_HASH_BYTES]) {
  crypto_generichash(out, XQC_ENROL_HASH_BYTES, token, XQC_ENROL_TOKEN_BYTES,
                     (const unsigned char *)k_hash_key, sizeof k_hash_key - 1);
}

static void hex(const uint8_t *b, size_t n, char *out) {
  static const char d[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = d[b[i] >> 4];
    out[2 * i + 1] = d[b[i] & 15];
  }
  out[2 * n] = '\0';
}

/* 32 hex digits (either case, surrounding blanks ignored) into 16 bytes; -1 otherwise. */
static int parse_token(const char *s, uint8_t out[XQC_ENROL_TOKEN_BYTES]) {
  while (*s == ' ' || *s == '\t') s++;
  for (int i = 0; i < 2 * XQC_ENROL_TOKEN_BYTES; i++) {
    int c = tolower((unsigned char)s[i]), v;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else return -1;
    if (i % 2 == 0) out[i / 2] = (uint8_t)(v << 4);
    else out[i / 2] |= (uint8_t)v;
  }
  for (s += 2 * XQC_ENROL_TOKEN_BYTES; *s == ' ' || *s == '\t'; s++) {}
  return *s ? -1 : 0;
}

static int exec(xqc_t *c, const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(c->db, sql, NULL, NULL, &err) == SQLITE_OK) return 0;
  XQ_LOGE(COMP, "campaign.db: %s", err ? err : "error");
  sqlite3_free(err);
  return XQ_EIO;
}

/* The latest expiry of an open (unused) token, into the ZAP handler: 0 when none. */
static void refresh_open(xqc_t *c) {
  int64_t until = 0;
  sqlite3_stmt *st = xqc_db_prep(c->db, "SELECT MAX(expires) FROM enrol_tokens WHERE used_at"
                                        " IS NULL AND expires > ?");
  if (st) {
    sqlite3_bind_int64(st, 1, (int64_t)time(NULL));
    if (sqlite3_step(st) == SQLITE_ROW) until = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  c->peers.auth.enrol_until_s = c->peers.auth.on ? until : 0;
}

int xqc_enrol_open(xqc_t *c, xq_errbuf_t *eb) {
  if (sodium_init() < 0) return xq_err_set(eb, XQ_EIO, "libsodium did not initialise");
  if (exec(c, k_schema) < 0)
    return xq_err_set(eb, XQ_EIO, "%s/campaign.db: cannot create enrol_tokens", c->dir);
  refresh_open(c);
  if (c->peers.auth.enrol_until_s)
    XQ_LOGI(COMP, "enrolment open: a token is unused until=%lld",
            (long long)c->peers.auth.enrol_until_s);
  return 0;
}

static int64_t count_open(xqc_t *c, int64_t now) {
  int64_t n = -1;
  sqlite3_stmt *st = xqc_db_prep(c->db, "SELECT COUNT(*) FROM enrol_tokens WHERE used_at IS"
                                        " NULL AND expires > ?");
  if (!st) return -1;
  sqlite3_bind_int64(st, 1, now);
  if (sqlite3_step(st) == SQLITE_ROW) n = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return n;
}

/* The worker's command line, from the lines `xqz join-command` prints (the last is it). */
static void worker_line(xqc_t *c, const char *token, char *out, size_t n) {
  char steps[2048], warn[512];
  xq_join_in_t in = {c->cfg.router, c->cfg.pub, c->cfg.curve_secret_key, c->cfg.curve_allow_dir};
  xq_join_command(&in, steps, sizeof steps, warn, sizeof warn);
  const char *w = strstr(steps, "xqz-worker --coordinator");
  size_t len = w ? strcspn(w, "\n") : 0;
  snprintf(out, n,
           "on the worker machine:\n"
           "  xqz keygen --dir ~/.xqz worker\n"
           "  echo '%s' > ~/.xqz/coordinator.pub\n"
           "  %.*s --enrol %s\n%s%s%s",
           c->peers.auth.curve.public_key, (int)len, w ? w : "", token, warn[0] ? "warning: " : "",
           warn, warn[0] ? "\n" : "");
}

void xqc_enrol_token(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__AdminRequest *r) {
  char by[XQC_IDENTITY_MAX], msg[3000];
  xqc_peer_identity(p, by, sizeof by);
  if (!c->peers.auth.on) {
    xqc_admin_reply(c, p, rq, false, "enrolment tokens need CURVE: without it any worker that"
                " reaches the port may connect already (docs/operations.md, Turning CURVE on)",
                NULL);
    return;
  }
  int64_t ttl = r->ttl_s ? (int64_t)r->ttl_s : XQC_ENROL_TTL_DEFAULT_S;
  if (ttl < 60 || ttl > XQC_ENROL_TTL_MAX_S) {
    snprintf(msg, sizeof msg, "ttl %lld s is out of range: 60 s to %d s (7 days)",
             (long long)ttl, XQC_ENROL_TTL_MAX_S);
    xqc_admin_reply(c, p, rq, false, msg, NULL);
    return;
  }
  int64_t now = (int64_t)time(NULL);
  int64_t open = count_open(c, now);
  if (open < 0 || open >= XQC_ENROL_OPEN_MAX) {
    snprintf(msg, sizeof msg, open < 0 ? "campaign.db did not answer (see the coordinator's"
             " log)" : "%lld tokens are open already: use them or wait until they expire",
             (long long)open);
    xqc_admin_reply(c, p, rq, false, msg, NULL);
    return;
  }
  uint8_t tok[XQC_ENROL_TOKEN_BYTES], h[XQC_ENROL_HASH_BYTES];
  if (getrandom(tok, sizeof tok, 0) != (ssize_t)sizeof tok) {
    XQ_LOGE(COMP, "getrandom failed error=\"%s\"", strerror(errno));
    xqc_admin_reply(c, p, rq, false, "getrandom failed (see the coordinator's log)", NULL);
    return;
  }
  xqc_enrol_hash(tok, h);
  /* Old rows go: used or expired a day ago, they only matter to the log. */
  sqlite3_stmt *st = xqc_db_prep(c->db, "DELETE FROM enrol_tokens WHERE expires < ?");
  if (st) {
    sqlite3_bind_int64(st, 1, now - 86400);
    xqc_db_step_done(c->db, st);
  }
  st = xqc_db_prep(c->db, "INSERT INTO enrol_tokens(hash, created, expires) VALUES(?, ?, ?)");
  int rc = XQ_EIO;
  if (st) {
    sqlite3_bind_blob(st, 1, h, sizeof h, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 2, now);
    sqlite3_bind_int64(st, 3, now + ttl);
    rc = xqc_db_step_done(c->db, st);
  }
  if (rc < 0) {
    sodium_memzero(tok, sizeof tok);
    xqc_admin_reply(c, p, rq, false, "campaign.db did not take the token (see the coordinator's"
                " log); nothing was opened", NULL);
    return;
  }
  refresh_open(c);
  char text[2 * XQC_ENROL_TOKEN_BYTES + 1], hh[2 * XQC_ENROL_HASH_BYTES + 1];
  hex(tok, sizeof tok, text);
  hex(h, sizeof h, hh);
  sodium_memzero(tok, sizeof tok);
  XQ_LOGW(COMP, "enrolment token made: one unknown key may join as a worker until it is used"
          " or expires token_hash=%.8s ttl_s=%lld expires=%lld by=%s", hh, (long long)ttl,
          (long long)(now + ttl), by);
  char line[2600];
  worker_line(c, text, line, sizeof line);
  snprintf(msg, sizeof msg, "enrolment token, valid once for %lld s (hash %.8s):\n%s",
           (long long)ttl, hh, line);
  xqc_admin_reply(c, p, rq, true, msg, text);
  sodium_memzero(text, sizeof text);
  sodium_memzero(msg, sizeof msg);
  sodium_memzero(line, sizeof line);
}

static void enrol_reply(xqc_t *c, xqc_peer_t *p, uint64_t rq, Xqz__EnrolResult__Reason reason,
                        const char *msg, const char *key_name) {
  Xqz__Envelope env;
  Xqz__EnrolResult r;
  xq_msg_enrol_result(&env, &r, reason, msg);
  if (key_name) r.key_name = (char *)key_name;
  env.request_id = rq;
  xqc_reply(c, p->rid, p->rid_len, &env);
}

/* A refusal: counted as a fault (cut-off after max_peer_errors), logged, answered. */
static void refuse(xqc_t *c, xqc_peer_t *p, uint64_t rq, Xqz__EnrolResult__Reason reason,
                   const char *why, const char *hash8) {
  char what[300];
  snprintf(what, sizeof what, "enrolment refused: %s (token_hash=%s)", why, hash8);
  xqc_peer_fault(c, p, what);
  if (!p->cut) enrol_reply(c, p, rq, reason, why, NULL);
}

/* The .pub file's name: enrolled-HOST-KEYHEX.pub, HOST cleaned to [A-Za-z0-9_-] (at most
 * 32), KEYHEX the whole key in hex: one name per key, safe as a path component. */
static void key_file_name(const char *host, const char *key, char *out, size_t n) {
  char h[33];
  size_t k = 0;
  for (const char *s = host ? host : ""; *s && k < sizeof h - 1; s++)
    if (isalnum((unsigned char)*s) || *s == '-' || *s == '_') h[k++] = *s;
  h[k] = '\0';
  uint8_t raw[32];
  char kh[65];
  if (!zmq_z85_decode(raw, key)) memset(raw, 0, sizeof raw);
  hex(raw, sizeof raw, kh);
  snprintf(out, n, "enrolled-%s%s%s.pub", h, k ? "-" : "", kh);
}

/* Writes key into curve_allow_dir as name (temp, fsync, rename, fsync the directory). */
static int write_key(xqc_t *c, const char *name, const char *key, xq_errbuf_t *eb) {
  char path[1200], line[XQ_Z85_KEY_LEN + 80];
  snprintf(path, sizeof path, "%s/%s", c->cfg.curve_allow_dir, name);
  int len = snprintf(line, sizeof line, "# enrolled with a one-time token\n%s\n", key);
  const void *parts[] = {line};
  size_t sizes[] = {(size_t)len};
  return xq_atomic_write(path, parts, sizes, 1, eb);
}

void xqc_cmd_enrol(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env) {
  const Xqz__EnrolRequest *r = env->enrol_request;
  if (!p->enrolling) { /* an allowed key (or no CURVE): nothing to do, no token used */
    enrol_reply(c, p, rq, XQZ__ENROL_RESULT__REASON__REASON_NONE,
                c->peers.auth.on ? "this key is in curve_allow_dir already: the token was not used"
                           : "the coordinator runs without CURVE: no key is needed",
                NULL);
    return;
  }
  uint8_t tok[XQC_ENROL_TOKEN_BYTES], h[XQC_ENROL_HASH_BYTES];
  if (parse_token(r->token ? r->token : "", tok) < 0) {
    refuse(c, p, rq, XQZ__ENROL_RESULT__REASON__REASON_UNKNOWN,
           "unknown token (not 32 hex digits as xqz enrol-token prints it)", "-");
    return;
  }
  xqc_enrol_hash(tok, h);
  sodium_memzero(tok, sizeof tok);
  char hh[2 * XQC_ENROL_HASH_BYTES + 1], h8[9];
  hex(h, sizeof h, hh);
  snprintf(h8, sizeof h8, "%.8s", hh);
  /* Compare with every row's hash in constant time, with no early exit: the time taken
   * says nothing about how much of a stored hash a guess matched. */
  int64_t now = (int64_t)time(NULL), expires = 0, used_at = 0;
  int found = 0;
  sqlite3_stmt *st = xqc_db_prep(c->db, "SELECT hash, expires, used_at FROM enrol_tokens");
  if (!st) {
    refuse(c, p, rq, XQZ__ENROL_RESULT__REASON__REASON_FAILED,
           "the coordinator could not read its tokens (see its log)", h8);
    return;
  }
  while (sqlite3_step(st) == SQLITE_ROW) {
    const void *b = sqlite3_column_blob(st, 0);
    if (!b || sqlite3_column_bytes(st, 0) != XQC_ENROL_HASH_BYTES) continue;
    int eq = sodium_memcmp(b, h, XQC_ENROL_HASH_BYTES) == 0;
    if (eq) {
      found = 1;
      expires = sqlite3_column_int64(st, 1);
      used_at = sqlite3_column_type(st, 2) == SQLITE_NULL ? 0 : sqlite3_column_int64(st, 2);
    }
  }
  sqlite3_finalize(st);
  char why[200];
  if (!found) {
    refuse(c, p, rq, XQZ__ENROL_RESULT__REASON__REASON_UNKNOWN,
           "unknown token: ask the operator for a new one (xqz enrol-token)", h8);
    return;
  }
  if (used_at) {
    snprintf(why, sizeof why, "used: the token was used at %lld (unix time); each token"
             " enrols one key: ask the operator for a new one", (long long)used_at);
    refuse(c, p, rq, XQZ__ENROL_RESULT__REASON__REASON_USED, why, h8);
    return;
  }
  if (expires <= now) {
    snprintf(why, sizeof why, "expired: the token expired at %lld (unix time): ask the"
             " operator for a new one", (long long)expires);
    refuse(c, p, rq, XQZ__ENROL_RESULT__REASON__REASON_EXPIRED, why, h8);
    refresh_open(c);
    return;
  }
  /* Consume first, atomically: only the request whose UPDATE changed the row goes on. */
  char name[128];
  key_file_name(r->host, p->key, name, sizeof name);
  st = xqc_db_prep(c->db, "UPDATE enrol_tokens SET used_at = ?, used_by_key = ?, key_file = ?"
                          " WHERE hash = ? AND used_at IS NULL AND expires > ?");
  int changed = 0;
  if (st) {
    sqlite3_bind_int64(st, 1, now);
    sqlite3_bind_text(st, 2, p->key, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, name, -1, SQLITE_TRANSIENT);
    sqlite3_bind_blob(st, 4, h, sizeof h, SQLITE_TRANSIENT);
    sqlite3_bind_int64(st, 5, now);
    if (xqc_db_step_done(c->db, st) == 0) changed = sqlite3_changes(c->db);
  }
  if (changed != 1) {
    refuse(c, p, rq, XQZ__ENROL_RESULT__REASON__REASON_USED,
           "used: the token was taken by another request just now", h8);
    refresh_open(c);
    return;
  }
  xq_errbuf_t eb;
  if (write_key(c, name, p->key, &eb) < 0) {
    /* Not enrolled: give the token back so that the worker may try again. */
    st = xqc_db_prep(c->db, "UPDATE enrol_tokens SET used_at = NULL, used_by_key = NULL,"
                            " key_file = NULL WHERE hash = ?");
    if (st) {
      sqlite3_bind_blob(st, 1, h, sizeof h, SQLITE_TRANSIENT);
      xqc_db_step_done(c->db, st);
    }
    XQ_LOGE(COMP, "enrolment failed: the key file could not be written; the token stays open"
            " token_hash=%s key=%s error=\"%s\"", h8, p->key, eb.msg);
    enrol_reply(c, p, rq, XQZ__ENROL_RESULT__REASON__REASON_FAILED,
                "the coordinator could not write the key into curve_allow_dir (see its log);"
                " the token was not used: try again", NULL);
    return;
  }
  refresh_open(c);
  XQ_LOGW(COMP, "worker key enrolled with a one-time token: it may connect as a worker (not"
          " admin, not trainer) token_hash=%s key=%s file=%s/%s address=%s", h8, p->key,
          c->cfg.curve_allow_dir, name, p->address[0] ? p->address : "-");
  char msg[300];
  snprintf(msg, sizeof msg, "enrolled as %s: connect again (as a worker)", name);
  enrol_reply(c, p, rq, XQZ__ENROL_RESULT__REASON__REASON_NONE, msg, name);
}
