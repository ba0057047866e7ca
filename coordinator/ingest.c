/*
 * ingest.c: games in. A GameRecord is decoded (xq_record_decode) and replayed into
 * training samples (xq_samples_from_record_adjudicated: the adjudicate_material setting
 * scores a length-cap game by material); an inconsistent record is rejected at once
 * and counted against its sender. An accepted record is appended to the segments; only
 * once its bytes are written in full do its samples enter the replay window and its
 * (worker id, seq) the seen set, and its Ack waits in a queue until the timer's fsync (or
 * the rewrite after a failed one, segments.h) has made it durable. Duplicates by (worker
 * id, seq) are acknowledged (also after the next fsync, since the first copy may still be
 * in flight) without being stored twice. When games cannot be stored (a full disk), none
 * is acknowledged: the state shows in the status, one error line a minute says what to do,
 * and storing resumes with the first write that succeeds (workers resend every 30 s).
 * A game under a worker id the sender does not own (peers.h) is refused unstored; a copy
 * of a game already in the window (same key, moves and result: copies.h) is refused.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord.h"
#include "records/game_record.h"
#include "support/log.h"
#include "records/targets.h"
#include "wire/messages.h"
#include "wire/sample.h"
#include "wire/wire.h"

#define COMP "ingest"

/* What a worker's statistics need of an accepted record, and its content hash. */
typedef struct {
  int result, reason, plies;
  uint64_t copy_hash; /* copies.h, of the record sent under the key given */
  uint64_t net_id;    /* the net that played it (0, "no net", is refused on ingest) */
} game_facts_t;

/* Replays one stored or received record into samples; returns the count or an error.
 * facts gets the result, end reason, length and content hash (under `key`). */
static int record_samples(const unsigned char *buf, size_t len, double material_pawns,
                          const char *key, xq_sample_t **out, game_facts_t *facts,
                          xq_errbuf_t *eb) {
  xq_game_record_t rec;
  xq_record_init(&rec);
  *out = NULL;
  int rc = xq_record_decode(&rec, buf, len, eb);
  if (rc == 0) {
    int cap = rec.nplies + 1;
    *out = malloc((size_t)cap * sizeof **out);
    rc = *out ? xq_samples_from_record_adjudicated(&rec, *out, cap, material_pawns, eb)
              : XQ_ENOMEM;
    if (rc < 0) {
      free(*out);
      *out = NULL;
    }
    *facts = (game_facts_t){(int)rec.result, (int)rec.reason, rec.nplies,
                            xqc_copies_hash(key, &rec), rec.net_id};
  }
  xq_record_free(&rec);
  return rc;
}

static int rebuild_visit(void *user, const char *worker_id, uint64_t seq,
                         const unsigned char *rec, size_t len) {
  xqc_t *c = user;
  if (xqc_seen_has(&c->window.seen, xqc_seen_key(worker_id, seq))) {
    /* A copy: records rewritten after a failed fsync may also be in the sealed file. */
    c->seg.repeated_records++;
    return 0;
  }
  uint32_t tag = xqc_sources_get(&c->window.sources, worker_id, NULL, NULL);
  const xqc_source_t *src = xqc_sources_at(&c->window.sources, tag);
  if (src && xqc_bans_match(&c->peers.bans, src->worker_id, src->key)) {
    /* Kept on disk (a ban deletes nothing) but not trained on. */
    xqc_seen_add(&c->window.seen, xqc_seen_key(worker_id, seq));
    c->stats.banned_games++;
    return 0;
  }
  xq_errbuf_t eb;
  xq_sample_t *s = NULL;
  game_facts_t facts;
  int n = record_samples(rec, len, c->cfg.adjudicate_material, src ? src->key : "", &s,
                         &facts, &eb);
  if (n >= 0 && xqc_copies_has(&c->window.copies, facts.copy_hash)) {
    /* A copy stored before copies were refused: kept on disk, not trained on twice. */
    free(s);
    xqc_seen_add(&c->window.seen, xqc_seen_key(worker_id, seq));
    c->stats.replayed_games++;
    return 0;
  }
  if (n < 0) {
    /* Accepted once, so this means a rules change or damage: say so, keep going. */
    XQ_LOGW(COMP, "stored game no longer replays; skipped worker=%s seq=%llu reason=\"%s\"",
            worker_id, (unsigned long long)seq, eb.msg);
    return 0;
  }
  for (int i = 0; i < n; i++) xqc_replay_push(&c->window.replay, &s[i], tag);
  free(s);
  xqc_copies_add(&c->window.copies, facts.copy_hash, (uint32_t)n);
  xqc_seen_add(&c->window.seen, xqc_seen_key(worker_id, seq));
  c->games++;
  c->positions += (uint64_t)n;
  return 0;
}

int xqc_ingest_open(xqc_t *c, xq_errbuf_t *eb) {
  char games[600], quarantine[600];
  snprintf(games, sizeof games, "%s/games", c->dir);
  xqc_copies_init(&c->window.copies, (uint64_t)c->cfg.window);
  snprintf(quarantine, sizeof quarantine, "%s/quarantine", c->dir);
  int rc = xqc_seg_open(&c->seg, games, quarantine, (uint64_t)c->cfg.segment_bytes,
                        rebuild_visit, c, eb);
  if (rc < 0) return rc;
  c->window.positions_at_open = c->positions;
  const xqc_segments_t *g = &c->seg;
  XQ_LOGI(COMP, "replay window rebuilt games=%llu positions=%llu window=%llu"
          " banned_games_skipped=%llu copies_skipped=%llu torn_bytes=%llu"
          " damaged_runs_quarantined=%llu damaged_bytes=%llu", (unsigned long long)c->games,
          (unsigned long long)c->positions, (unsigned long long)c->window.replay.count,
          (unsigned long long)c->stats.banned_games, (unsigned long long)g->repeated_records,
          (unsigned long long)g->torn_bytes, (unsigned long long)g->repaired_regions,
          (unsigned long long)g->repaired_bytes);
  if (g->quarantine_files)
    XQ_LOGW(COMP, "the quarantine holds damaged bytes cut out of game segments; the records"
            " around them were kept (see docs/operations.md, \"Damaged segments\")"
            " dir=%s files=%llu bytes=%llu", g->quarantine,
            (unsigned long long)g->quarantine_files, (unsigned long long)g->quarantine_bytes);
  return 0;
}

/* Storage trouble: games cannot be stored (a write failed) or made durable (a rewrite
 * after a failed fsync is waiting). Acks stop, workers keep their games and resend them;
 * one error line a minute says so. */
static void storage_blocked(xqc_t *c, const char *why) {
  xqc_segments_t *g = &c->seg;
  uint64_t now = xqc_now_ms();
  if (!g->blocked_since_ms) {
    g->blocked_since_ms = now;
    g->blocked_logged_ms = 0;
  }
  if (g->blocked_logged_ms && now - g->blocked_logged_ms < 60000) return;
  g->blocked_logged_ms = now;
  /* The advice follows the cause: out of descriptors is not a full disk. */
  bool fds = strstr(why, strerror(EMFILE)) || strstr(why, strerror(ENFILE));
  XQ_LOGE(COMP, "cannot store games; acknowledgements paused (workers keep their games and"
          " resend them): %s%s, storing resumes by itself blocked_s=%llu"
          " games_not_stored=%llu reason=\"%s\"",
          fds ? "the process is out of file descriptors (connections take them: look for a"
                " client holding many, raise LimitNOFILE) in " : "free space in ", g->dir,
          (unsigned long long)((now - g->blocked_since_ms) / 1000u),
          (unsigned long long)g->blocked_games, why);
}

/* After a successful write: ends a blocked spell. */
static void storage_ok(xqc_t *c) {
  xqc_segments_t *g = &c->seg;
  if (!g->blocked_since_ms || g->error[0]) return;
  uint64_t blocked_s = (xqc_now_ms() - g->blocked_since_ms) / 1000u;
  XQ_LOGI(COMP, "storing games again; acknowledgements resumed blocked_s=%llu"
          " games_not_stored=%llu", (unsigned long long)blocked_s,
          (unsigned long long)g->blocked_games);
  g->blocked_since_ms = g->blocked_logged_ms = g->blocked_games = 0;
}

static void send_ack(xqc_t *c, const uint8_t *rid, size_t rid_len, uint64_t request_id,
                     const char *worker_id, uint64_t seq, bool accepted, const char *reason) {
  Xqz__Envelope env;
  Xqz__Ack ack;
  xq_msg_ack(&env, &ack, worker_id, seq, accepted, reason);
  env.request_id = request_id;
  xqc_reply(c, rid, rid_len, &env);
}

static int queue_ack(xqc_t *c, const xqc_peer_t *p, uint64_t request_id, const char *worker_id,
                     uint64_t seq) {
  if (c->nacks == c->cap_acks) {
    int ncap = c->cap_acks ? c->cap_acks * 2 : 64;
    xqc_pending_ack_t *na = realloc(c->acks, (size_t)ncap * sizeof *na);
    if (!na) return XQ_ENOMEM;
    c->acks = na;
    c->cap_acks = ncap;
  }
  xqc_pending_ack_t *a = &c->acks[c->nacks++];
  memcpy(a->rid, p->rid, p->rid_len);
  a->rid_len = p->rid_len;
  a->request_id = request_id;
  a->seq = seq;
  snprintf(a->worker_id, sizeof a->worker_id, "%s", worker_id);
  return 0;
}

void xqc_ingest_game(xqc_t *c, xqc_peer_t *p, uint64_t request_id, const Xqz__GameRecord *g) {
  const char *wid = g->worker_id ? g->worker_id : "";
  if (!xqc_worker_id_ok(wid) || g->record.len == 0 || g->record.len > XQ_RECORD_MAX_PAYLOAD) {
    xqc_peer_fault(c, p, "game with a bad worker id or record size");
    send_ack(c, p->rid, p->rid_len, request_id, wid, g->seq, false,
             "bad worker id or record size");
    return;
  }
  char why[400];
  if (xqc_peer_claim(c, p, wid, why, sizeof why) < 0) {
    /* Another key or live connection owns the worker id: not stored, not acked. */
    xqc_peer_refuse_claim(c, p, request_id, why);
    return;
  }
  if (xqc_bans_match(&c->peers.bans, wid, p->key) || xqc_peer_banned(c, p)) {
    /* Refused for good (accepted=false), so the worker drops it instead of resending. */
    c->stats.banned_games++;
    XQ_LOGD(COMP, "game of a banned sender refused worker=%s seq=%llu", wid,
            (unsigned long long)g->seq);
    send_ack(c, p->rid, p->rid_len, request_id, wid, g->seq, false, "banned by the operator");
    return;
  }
  uint64_t key = xqc_seen_key(wid, g->seq);
  if (xqc_seen_has(&c->window.seen, key)) {
    c->duplicates++;
    queue_ack(c, p, request_id, wid, g->seq);
    return;
  }
  xq_errbuf_t eb;
  xq_sample_t *s = NULL;
  game_facts_t facts = {0};
  int n = record_samples(g->record.data, g->record.len, c->cfg.adjudicate_material, p->key,
                         &s, &facts, &eb);
  if (n >= 0 && facts.net_id == 0) { /* 0 is "no net": no net played this game */
    free(s);
    s = NULL;
    n = xq_err_set(&eb, XQ_EINVAL, "net id 0 (the no-net value): a game names the net that"
                   " played it");
  }
  if (n < 0) {
    c->rejected_games++;
    p->rejected++;
    /* Only known workers are charged: a made-up id in a bad record creates no entry. */
    xqc_worker_t *w = xqc_workers_find(&c->stats.workers, p->worker_id);
    if (!w) w = xqc_workers_find(&c->stats.workers, wid);
    if (w) {
      w->rejected++;
      w->dirty = true;
    }
    XQ_LOGW(COMP, "game rejected worker=%s seq=%llu reason=\"%s\"", wid,
            (unsigned long long)g->seq, eb.msg);
    xqc_peer_error(c, p, "inconsistent game record");
    send_ack(c, p->rid, p->rid_len, request_id, wid, g->seq, false, eb.msg);
    return;
  }
  if (xqc_copies_has(&c->window.copies, facts.copy_hash)) {
    /* The same moves and result from the same key under a new seq: one game, once. */
    c->stats.replayed_games++;
    if (!p->copy_refused)
      XQ_LOGW(COMP, "game refused: a copy of a game already in the window (logged once per"
              " connection; the status line counts them as copies) worker=%s seq=%llu", wid,
              (unsigned long long)g->seq);
    p->copy_refused = true;
    free(s);
    send_ack(c, p->rid, p->rid_len, request_id, wid, g->seq, false,
             "a copy of a game already in the window");
    return;
  }
  int rc = xqc_seg_append(&c->seg, wid, g->seq, g->record.data, g->record.len, &eb);
  if (rc < 0) {
    /* Not stored, not seen, not in the window: no ack, so the worker keeps the game and
     * resends it later. */
    c->seg.blocked_games++;
    storage_blocked(c, eb.msg);
    free(s);
    return;
  }
  storage_ok(c);
  int key_changed = 0;
  uint32_t tag = xqc_sources_get(&c->window.sources, wid, p->key, &key_changed);
  if (key_changed && xqc_db_worker_key_set(c->db, wid, p->key) < 0)
    XQ_LOGW(COMP, "cannot record the worker's key; a ban on that key will not skip its games"
            " after a restart worker=%s", wid);
  for (int i = 0; i < n; i++) xqc_replay_push(&c->window.replay, &s[i], tag);
  free(s);
  xqc_copies_add(&c->window.copies, facts.copy_hash, (uint32_t)n);
  xqc_seen_add(&c->window.seen, key);
  c->games++;
  c->positions += (uint64_t)n;
  p->games_done++;
  xqc_worker_t *w = xqc_workers_get(&c->stats.workers, wid, xqc_now_ms(),
                                    (uint64_t)c->cfg.worker_timeout_ms);
  if (w) xqc_worker_game(w, facts.result, facts.reason, facts.plies, n);
  xqc_peer_worker_sync(c, p, w);
  queue_ack(c, p, request_id, wid, g->seq);
}

void xqc_ingest_flush(xqc_t *c) {
  if (c->seg.blocked_since_ms) storage_blocked(c, c->seg.error); /* the minute's line */
  if (c->nacks == 0 && !xqc_seg_dirty(&c->seg)) return;
  xq_errbuf_t eb;
  if (xqc_seg_sync(&c->seg, &eb) < 0) {
    if (xqc_seg_failed(&c->seg)) {
      /* Logged by the segments; the queued acks are never sent. */
      c->stopping = true;
      if (c->loop) uv_stop(c->loop);
      return;
    }
    storage_blocked(c, eb.msg);
    return;
  }
  storage_ok(c);
  for (int i = 0; i < c->nacks; i++) {
    xqc_pending_ack_t *a = &c->acks[i];
    send_ack(c, a->rid, a->rid_len, a->request_id, a->worker_id, a->seq, true, "");
  }
  c->nacks = 0;
}

static int source_banned(uint32_t tag, void *user) {
  xqc_t *c = user;
  const xqc_source_t *src = xqc_sources_at(&c->window.sources, tag);
  return src && xqc_bans_match(&c->peers.bans, src->worker_id, src->key);
}

uint64_t xqc_ingest_purge_banned(xqc_t *c, int *acks_dropped) {
  int kept = 0;
  for (int i = 0; i < c->nacks; i++) {
    xqc_pending_ack_t *a = &c->acks[i];
    if (xqc_bans_match(&c->peers.bans, a->worker_id,
                       xqc_sources_key_of(&c->window.sources, a->worker_id)))
      continue;
    if (kept != i) c->acks[kept] = *a;
    kept++;
  }
  *acks_dropped = c->nacks - kept;
  c->nacks = kept;
  return xqc_replay_remove(&c->window.replay, source_banned, c);
}
