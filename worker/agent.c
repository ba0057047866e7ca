/* agent.c: the worker's conversation with the coordinator (agent.h, docs/worker.md). */
#include "agent.h"

#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "guest.h"
#include "job_check.h"
#include "link.h"
#include "nn/blas_core.h"
#include "nn/netcache.h"
#include "nn/nn_bf16.h"
#include "search/players.h"
#include "arena_outbox.h"
#include "selfplay_loop.h"
#include "spool.h"
#include "spool_campaign.h"
#include "spool_id.h"
#include "support/crc32.h"
#include "support/log.h"
#include "support/mkdir_p.h"
#include "support/rng.h"
#include "wire/messages.h"
#include "wire/wire.h"
#include "support/clock.h"

#define C "worker"
#define ANNOUNCE_SPREAD_MS 5000  /* random delay before fetching an announced net */
#define FETCH_RETRY_MS 30000     /* wait after a failed fetch */
#define RESEND_MS 30000          /* resend an unacknowledged game after this long */
#define MAX_IN_FLIGHT 256        /* games sent and not acknowledged within RESEND_MS, at most */
#define STOP_ABORT_MS 2000       /* after SIGTERM, running games get this long to finish */
#define STOP_GRACE_MS 10000      /* ... and the play thread this long to return, at most */
#define JOB_RETRY_MS 2000        /* ask for another job this long after giving one up */
#define HELLO_RETRY_MS 5000      /* say Hello again this long after it was refused */
#define PAUSE_DRAIN_MS 20000     /* on a pause, running games get this long to finish */
#define NETCACHE_KEEP_LAST 3     /* the newest cached nets kept whatever the size cap */

typedef struct {
  const xq_worker_opts_t *o;
  char worker_id[256], host[128];
  xq_link_t link;
  xq_spool_t *spool;
  xq_play_loop_t play;
  xq_rng_t rng;
  int welcomed;
  int64_t hello_retry_ms; /* when to say Hello again after a refusal (0 = not due) */
  int64_t first_unanswered_ms; /* oldest request without any answer since (0 = none) */
  uint32_t heartbeat_ms;
  int64_t last_hb_ms;
  Xqz__SelfplaySettings settings; /* from Welcome, overridden by a job's */
  int have_settings;
  uint64_t best_net; /* from Welcome */
  uint64_t campaign_id; /* of the spooled games (spool_campaign.h); 0 = not known yet */
  /* current job */
  int job_kind; /* 0 none */
  uint64_t job_net;
  int64_t job_games;
  uint64_t job_stamp;
  Xqz__ArenaJob arena;
  char arena_fen[160], arena_anchor[64];
  int arena_logged; /* 1 + the arena precision last logged (0: none yet) */
  xq_outbox_t outbox; /* finished pairs' results until answered (arena_outbox.h) */
  int playing_arena;  /* an arena pair runs: playing_match, playing_pair */
  uint64_t playing_match;
  uint32_t playing_pair;
  int job_pending;
  int64_t job_pending_ms;
  int64_t job_retry_ms; /* when to ask for another job after giving one up (0 = not due) */
  /* nets */
  xq_netfetch_t fetch; /* fetch.id != 0 while active */
  int64_t fetch_tx_ms;
  uint64_t failed_net;
  int64_t failed_ms;
  uint64_t announced, announce_pending;
  int64_t announce_at_ms;
  uint64_t announce_stamp, stamp;
  uint64_t playing_net; /* net of the running or last self-play batch */
  int spool_full_logged;
  int fatal; /* stop now, exit non-zero (another protocol, or another campaign) */
  /* progress */
  int64_t last_progress_ms, last_progress_pos;
  /* arena pairs finished since the last summary line (arena_summary) */
  int64_t arena_since_ms;
  uint64_t arena_pairs, arena_wins, arena_draws, arena_losses, arena_match;
  /* a lent machine (guest.h) */
  volatile sig_atomic_t *pause_sig; /* SIGUSR1 sets, SIGUSR2 clears */
  unsigned pause;                   /* XQ_PAUSE_* bits in force */
  int64_t pause_ms;                 /* when the current pause began (0: playing) */
  bool pause_aborted;               /* the running task was cut short for this pause */
  xq_idle_t idle;
  int64_t load_ms;                  /* time of the last CPU sample (0: none) */
  uint64_t load_busy, load_self;
  unsigned memory_bit;              /* XQ_PAUSE_MEMORY while the RSS is above the cap */
  long rss_mb;
} agent_t;

static void send_env(agent_t *a, Xqz__Envelope *env, int request) {
  if (xq_link_send(&a->link, env)) XQ_LOGD(C, "send failed (queue full or closed)");
  if (request && !a->first_unanswered_ms) a->first_unanswered_ms = xq_clock_ms();
}

/* Sends (again) an outbox entry under a new request id, which its answer will carry. */
static void send_arena_result(agent_t *a, xq_outbox_entry_t *e) {
  Xqz__Envelope env;
  Xqz__ArenaResult r;
  xq_msg_arena_result(&env, &r, a->worker_id, e->match_id, e->pair_index, e->result_a_red,
                      e->result_a_black);
  r.reason_a_red = e->reason_a_red;
  r.reason_a_black = e->reason_a_black;
  send_env(a, &env, 0);
  e->request_id = env.request_id;
}

static void send_hello(agent_t *a) {
  Xqz__Envelope env;
  Xqz__Hello h;
  xq_msg_hello(&env, &h, XQZ__ROLE__ROLE_WORKER, a->worker_id, a->host,
               (uint32_t)a->o->threads, a->campaign_id);
  /* Pinned arena precisions are honoured; bf16 only where this CPU runs it (nn_bf16.h), so
   * the coordinator sends bf16 pairs to other workers. */
  h.features = XQ_FEATURE_ANCHOR_JOBS | XQ_FEATURE_ARENA_PRECISION | XQ_FEATURE_HOLDING |
               (nn_bf16_cpu_supported() ? XQ_FEATURE_BF16 : 0u);
  /* The dashboard's precision column: a replaying worker's "self-play" is the recording. */
  h.precision = a->o->replay ? (char *)"replay" : (char *)nn_precision_name(nn_precision_current());
  /* Every pair this worker holds (XQ_FEATURE_HOLDING): the coordinator hands out again
   * any other it issued here (its Job lost in a restart) instead of waiting for its
   * deadline. */
  Xqz__ArenaPairRef refs[XQ_OUTBOX_MAX + 2], *ptrs[XQ_OUTBOX_MAX + 2];
  size_t n = 0;
  for (int i = 0; i < a->outbox.n; i++) {
    xqz__arena_pair_ref__init(&refs[n]);
    refs[n].match_id = a->outbox.e[i].match_id;
    refs[n].pair_index = a->outbox.e[i].pair_index;
    n++;
  }
  if (a->playing_arena) {
    xqz__arena_pair_ref__init(&refs[n]);
    refs[n].match_id = a->playing_match;
    refs[n].pair_index = a->playing_pair;
    n++;
  }
  if (a->job_kind == XQ_TASK_ARENA) { /* given, not started */
    xqz__arena_pair_ref__init(&refs[n]);
    refs[n].match_id = a->arena.match_id;
    refs[n].pair_index = a->arena.pair_index;
    n++;
  }
  for (size_t i = 0; i < n; i++) ptrs[i] = &refs[i];
  h.n_holding = n;
  h.holding = ptrs;
  send_env(a, &env, 1);
}

static void send_job_request(agent_t *a) {
  Xqz__Envelope env;
  Xqz__JobRequest r;
  xq_msg_job_request(&env, &r, a->worker_id);
  send_env(a, &env, 1);
  a->job_pending = 1;
  a->job_pending_ms = xq_clock_ms();
}

static void send_net_request(agent_t *a) {
  Xqz__Envelope env;
  Xqz__NetRequest r;
  xq_msg_net_request(&env, &r, a->fetch.id, a->fetch.have, XQ_WIRE_NET_CHUNK);
  send_env(a, &env, 1);
  a->fetch_tx_ms = xq_clock_ms();
}

static void send_game(void *ctx, const char *wid, uint64_t seq, const void *rec, size_t len) {
  agent_t *a = ctx;
  Xqz__Envelope env;
  Xqz__GameRecord g;
  xq_msg_game(&env, &g, wid, seq, rec, len);
  send_env(a, &env, 1);
}

static void send_heartbeat(agent_t *a) {
  Xqz__Envelope env;
  Xqz__Heartbeat h;
  xq_msg_heartbeat(&env, &h, a->worker_id, a->playing_net,
                   (uint64_t)atomic_load(&a->play.games));
  h.paused = a->pause != 0;
  h.pause_reason = (char *)xq_pause_reason(a->pause);
  send_env(a, &env, 0);
  a->last_hb_ms = xq_clock_ms();
}

/* Whether the last fetch of id failed less than FETCH_RETRY_MS ago (it is not retried yet). */
static bool net_failed(const agent_t *a, uint64_t id) {
  return id && id == a->failed_net && xq_clock_ms() - a->failed_ms < FETCH_RETRY_MS;
}

/* Gives the current job up (logged with why) and asks for another after JOB_RETRY_MS, so a
 * job the worker cannot play never holds it: an arena pair it gives back is handed to
 * another worker when its deadline passes. */
static void give_up_job(agent_t *a, const char *why) {
  XQ_LOGW(C, "giving the job up and asking for another in %d s kind=%s reason=\"%s\"",
          JOB_RETRY_MS / 1000, a->job_kind == XQ_TASK_ARENA ? "arena" : "selfplay", why);
  a->job_kind = 0;
  a->job_retry_ms = xq_clock_ms() + JOB_RETRY_MS;
}

/* Starts fetching id unless it is cached or being fetched; 1 when it is cached. */
static int want_net(agent_t *a, uint64_t id) {
  if (!id || xq_netcache_has(a->o->cache, id)) return 1;
  if (a->fetch.id) return 0;
  if (id == a->failed_net && xq_clock_ms() - a->failed_ms < FETCH_RETRY_MS) return 0;
  if (!a->welcomed) return 0;
  xq_netfetch_begin(&a->fetch, id);
  XQ_LOGI(C, "fetching net net=%016" PRIx64, id);
  send_net_request(a);
  return 0;
}

/* Keeps the net cache under --cache-mb: the best net, the nets of the current and the
 * pending jobs, the net being played and the NETCACHE_KEEP_LAST newest stay whatever the
 * size; the least recently used others go first. */
static void prune_cache(agent_t *a) {
  uint64_t keep[] = {a->best_net, a->announced, a->announce_pending, a->playing_net,
                     a->job_net, a->arena.net_a, a->arena.net_b, a->fetch.id};
  xq_netcache_usage_t u;
  xq_errbuf_t eb = {{0}};
  int rc = xq_netcache_prune(a->o->cache, keep, (int)(sizeof keep / sizeof keep[0]),
                             NETCACHE_KEEP_LAST, (uint64_t)a->o->cache_mb << 20, &u, &eb);
  if (rc < 0)
    XQ_LOGW(C, "cannot trim the net cache; it may grow past --cache-mb dir=%s error=\"%s\"",
            a->o->cache, eb.msg);
  else if (u.removed)
    XQ_LOGI(C, "net cache trimmed to --cache-mb removed=%d nets=%d mb=%.1f cap_mb=%d",
            u.removed, u.files, (double)u.bytes / 1048576.0, a->o->cache_mb);
  else if (u.bytes > (uint64_t)a->o->cache_mb << 20)
    XQ_LOGW(C, "the nets in use alone exceed --cache-mb; raise it nets=%d mb=%.1f cap_mb=%d",
            u.files, (double)u.bytes / 1048576.0, a->o->cache_mb);
}

static void on_chunk(agent_t *a, const Xqz__NetChunk *c) {
  if (!a->fetch.id || c->net_id != a->fetch.id) return;
  xq_errbuf_t eb = {{0}};
  int rc = xq_netfetch_add(&a->fetch, a->o->cache, c->net_id, c->offset, c->total,
                           c->file_crc32, c->data.data, c->data.len, &eb);
  if (rc == 0) {
    send_net_request(a);
    return;
  }
  if (rc == 1) {
    XQ_LOGI(C, "net fetched and verified net=%016" PRIx64 " bytes=%" PRIu64, c->net_id, c->total);
    xq_netfetch_close(&a->fetch);
    prune_cache(a);
    return;
  } else {
    XQ_LOGW(C, "net fetch failed; not retried for %d s net=%016" PRIx64 " error=\"%s\"",
            FETCH_RETRY_MS / 1000, c->net_id, eb.msg);
    a->failed_net = c->net_id;
    a->failed_ms = xq_clock_ms();
  }
  xq_netfetch_close(&a->fetch);
}

static void apply_settings(const agent_t *a, xq_selfplay_config_t *cfg) {
  xq_selfplay_config_default(cfg);
  cfg->threads = a->o->threads;
  cfg->parallel = a->o->games_per_thread;
  cfg->seed = xq_rng_next((xq_rng_t *)&a->rng);
  if (!a->have_settings) return;
  /* Proto3 has no "unset": a zero means "the default" for every setting. */
  const Xqz__SelfplaySettings *s = &a->settings;
  if (s->sims) cfg->sims_full = (int)s->sims;
  if (s->fast_sims) cfg->sims_fast = (int)s->fast_sims;
  if (s->full_frac > 0 && s->full_frac <= 1) cfg->full_frac = s->full_frac;
  if (s->max_plies) cfg->mcts.max_plies = (int)(s->max_plies > 1000 ? 1000 : s->max_plies);
  if (s->noise_frac > 0 && s->noise_frac <= 1) cfg->mcts.noise_frac = s->noise_frac;
  if (s->dirichlet_alpha > 0) cfg->mcts.dirichlet_alpha = s->dirichlet_alpha;
  if (s->temp_plies) cfg->temp_plies = (int)s->temp_plies;
  cfg->temp_final = s->temp_final >= 0.0f && s->temp_final <= 2.0f ? s->temp_final : 0.0f;
  if (s->resign_threshold <= -1) cfg->resign_threshold = -2; /* never */
  else if (s->resign_threshold < 0) cfg->resign_threshold = s->resign_threshold;
  if (s->no_resign_frac > 0 && s->no_resign_frac <= 1) cfg->no_resign_frac = s->no_resign_frac;
  cfg->mcts.mate_probe = s->mate_probe == 1;
  cfg->mcts.search = s->search <= XQ_SEARCH_GUMBEL_TREE ? (xq_search_kind_t)s->search
                                                       : XQ_SEARCH_GUMBEL; /* a newer kind */
  if (s->gumbel_actions) cfg->mcts.gumbel_actions = (int)(s->gumbel_actions > 128 ? 128 : s->gumbel_actions);
}

static void copy_settings(agent_t *a, const Xqz__SelfplaySettings *s) {
  if (!s) return;
  a->settings = *s;
  a->have_settings = 1;
}

/* The Welcome's campaign: a worker of no campaign yet takes it and records it beside the
 * spool, so the games it spools are tied to it across restarts. */
static void adopt_campaign(agent_t *a, uint64_t id) {
  if (!id || id == a->campaign_id) return;
  a->campaign_id = id;
  xq_errbuf_t eb = {{0}};
  if (xq_spool_campaign_save(a->o->spool, id, &eb))
    XQ_LOGW(C, "cannot record the campaign beside the spool; playing on error=\"%s\"", eb.msg);
  else
    XQ_LOGI(C, "joined campaign=%016" PRIx64 " spool=%s", id, a->o->spool);
}

static void rejoin(agent_t *a);

static void on_message(agent_t *a, Xqz__Envelope *env, int from_pub) {
  if (from_pub) {
    if (env->body_case != XQZ__ENVELOPE__BODY_NET_ANNOUNCE) return;
    uint64_t id = env->net_announce->net_id;
    if (!id || id == a->announced || id == a->announce_pending) return;
    a->announce_pending = id;
    a->announce_at_ms = xq_clock_ms() + (int64_t)xq_rng_below(&a->rng, ANNOUNCE_SPREAD_MS);
    XQ_LOGI(C, "new net announced net=%016" PRIx64 " elo=%.1f", id, env->net_announce->elo);
    return;
  }
  a->first_unanswered_ms = 0;
  switch (env->body_case) {
    case XQZ__ENVELOPE__BODY_WELCOME: {
      const Xqz__Welcome *w = env->welcome;
      if (!a->welcomed)
        XQ_LOGI(C, "connected coordinator=%s best_net=%016" PRIx64 " unacked=%zu", a->o->coordinator,
                w->best_net_id, xq_spool_count(a->spool));
      a->welcomed = 1;
      a->heartbeat_ms = w->heartbeat_ms ? w->heartbeat_ms : 5000;
      a->best_net = w->best_net_id;
      adopt_campaign(a, w->campaign_id);
      xq_errbuf_t eb = {{0}};
      if (xq_job_check_settings(w->settings, &eb))
        XQ_LOGW(C, "refused the coordinator's settings; keeps its own until a job brings"
                " valid ones reason=\"%s\"", eb.msg);
      else copy_settings(a, w->settings);
      xq_spool_reset_sent(a->spool);
      for (int i = 0; i < a->outbox.n; i++) send_arena_result(a, &a->outbox.e[i]);
      if (a->outbox.n)
        XQ_LOGI(C, "arena results not yet answered sent again results=%d", a->outbox.n);
      if (a->fetch.id) send_net_request(a);
      /* An arena pair not yet started (its nets still coming) is kept: the coordinator
       * holds it for this worker across its restart, and a new job would replace it. */
      if (!a->job_pending && a->job_kind != XQ_TASK_ARENA) send_job_request(a);
      break;
    }
    case XQZ__ENVELOPE__BODY_JOB: {
      const Xqz__Job *j = env->job;
      a->job_pending = 0;
      xq_errbuf_t eb = {{0}};
      int bad = j->kind_case == XQZ__JOB__KIND_SELFPLAY ? xq_job_check_selfplay(j->selfplay, &eb)
              : j->kind_case == XQZ__JOB__KIND_ARENA  ? xq_job_check_arena(j->arena, &eb)
              : xq_err_set(&eb, XQ_EINVAL, "a job of unknown kind %d", (int)j->kind_case);
      if (bad) {
        a->job_kind = 0;
        XQ_LOGW(C, "refused a job from the coordinator: %s; asking for another in %d s (a"
                " coordinator that keeps sending such jobs is misconfigured or not to be"
                " trusted)", eb.msg, JOB_RETRY_MS / 1000);
        a->job_retry_ms = xq_clock_ms() + JOB_RETRY_MS;
        break;
      }
      if (j->kind_case == XQZ__JOB__KIND_SELFPLAY) {
        a->job_kind = XQ_TASK_SELFPLAY;
        a->job_net = j->selfplay->net_id;
        a->job_games = j->selfplay->games;
        copy_settings(a, j->selfplay->settings);
      } else if (j->kind_case == XQZ__JOB__KIND_ARENA) {
        a->job_kind = XQ_TASK_ARENA;
        a->arena = *j->arena;
        snprintf(a->arena_fen, sizeof a->arena_fen, "%s", j->arena->opening_fen ? j->arena->opening_fen : "");
        a->arena.opening_fen = a->arena_fen;
        const char *anchor = j->arena->anchor_b ? j->arena->anchor_b : "";
        if (*anchor && (strlen(anchor) >= sizeof a->arena_anchor || !xq_player_is_builtin(anchor))) {
          /* Only a built-in player may be named: never a file or a command of the peer's. */
          XQ_LOGW(C, "arena job names an anchor that is not a built-in player; skipped"
                  " match=%" PRIu64 " anchor=\"%.60s\"", j->arena->match_id, anchor);
          a->job_kind = 0;
          if (a->welcomed) send_job_request(a);
          break;
        }
        snprintf(a->arena_anchor, sizeof a->arena_anchor, "%s", anchor);
        a->arena.anchor_b = a->arena_anchor;
        if (j->arena->precision == XQZ__ARENA_PRECISION__ARENA_PRECISION_BF16 &&
            !nn_bf16_cpu_supported()) {
          /* Playing it in fp32 would decide a promotion on a precision difference; given
           * back, the pair goes to another worker when its deadline passes (this one's
           * Hello lacks XQ_FEATURE_BF16: only a misconfigured coordinator sends it). */
          char why[200];
          snprintf(why, sizeof why, "arena pair %u of match %" PRIu64 " is pinned to bf16 and"
                   " this CPU lacks avx512_bf16; refused, not played in fp32",
                   j->arena->pair_index, j->arena->match_id);
          a->job_kind = XQ_TASK_ARENA;
          give_up_job(a, why);
          break;
        }
      }
      a->job_stamp = ++a->stamp;
      break;
    }
    case XQZ__ENVELOPE__BODY_ACK: {
      const Xqz__Ack *k = env->ack;
      xq_outbox_entry_t done;
      if (!k->worker_id[0]) { /* an arena result's answer (never a spooled game's) */
        if (xq_outbox_answered(&a->outbox, env->request_id, &done) && !k->accepted)
          XQ_LOGI(C, "arena result not counted match=%" PRIu64 " pair=%u reason=\"%s\"",
                  done.match_id, done.pair_index, k->reason);
        break;
      }
      if (!k->accepted)
        XQ_LOGW(C, "game rejected by the coordinator; dropped seq=%" PRIu64 " reason=\"%s\"", k->seq, k->reason);
      xq_spool_ack(a->spool, k->worker_id, k->seq);
      break;
    }
    case XQZ__ENVELOPE__BODY_NET_CHUNK: on_chunk(a, env->net_chunk); break;
    case XQZ__ENVELOPE__BODY_ERROR:
      if (env->error->code == XQ_ERROR_CAMPAIGN) {
        /* Retrying cannot help: the spool belongs to another campaign. */
        XQ_LOGE(C, "the coordinator runs another campaign; stopping, spool kept spool=%s"
                " campaign=%016" PRIx64 " reason=\"%s\"", a->o->spool, a->campaign_id,
                env->error->message ? env->error->message : "");
        a->fatal = 1;
        break;
      }
      if (env->error->code == XQ_ERROR_HELLO_FIRST) {
        /* The coordinator does not know this connection (it restarted, or forgot a silent
         * peer): say Hello; what it could not take is sent again after the Welcome. */
        XQ_LOGI(C, "the coordinator asks for a Hello first; saying it message=\"%s\"",
                env->error->message);
        if (a->welcomed) rejoin(a);
        break;
      }
      XQ_LOGW(C, "coordinator error code=%u message=\"%s\"", env->error->code, env->error->message);
      /* A refused Hello (its worker id still held by this worker's previous connection,
       * say) is said again later; nothing else would send it. */
      if (!a->welcomed) a->hello_retry_ms = xq_clock_ms() + HELLO_RETRY_MS;
      if (a->fetch.id) { /* most likely about the net we asked for */
        a->failed_net = a->fetch.id;
        a->failed_ms = xq_clock_ms();
        xq_netfetch_close(&a->fetch);
      }
      break;
    default: break;
  }
}

/* A coordinator of another protocol version, or one that admits only newer workers
 * (min_peer_version, its reason says which version to install): retrying cannot help, so
 * the worker stops. */
static void fatal_version(agent_t *a, const char *why) {
  if (!strncmp(why, XQ_WIRE_TOO_OLD, strlen(XQ_WIRE_TOO_OLD)))
    XQ_LOGE(C, "the coordinator admits only newer workers; stopping: install the version it"
            " names, then start the worker again this_worker=\"%s\" reason=\"%s\"",
            XQ_VERSION_LINE, why);
  else
    XQ_LOGE(C, "the coordinator speaks another protocol version; stopping (upgrade the worker"
            " or the coordinator) this_worker=\"%s\" reason=\"%s\"", XQ_VERSION_LINE, why);
  a->fatal = 1;
}

/* Handles one message from the link if one comes within timeout_ms; 1 when one came. */
static int poll_once(agent_t *a, int timeout_ms) {
  Xqz__Envelope *env = NULL;
  int from_pub = 0;
  int rc = xq_link_poll(&a->link, timeout_ms, &env, &from_pub);
  if (rc == XQ_EVERSION) fatal_version(a, a->link.version_error);
  if (rc != 1) return 0;
  if (!from_pub && xq_wire_is_version_refusal(env)) fatal_version(a, env->error->message);
  else on_message(a, env, from_pub);
  xq_wire_free(&env);
  return 1;
}

/* The precision of the arena pair being posted: the coordinator's pin (arena_precision),
 * else this process's (--precision), said in the log when it changes. Self-play keeps the
 * process's whatever the pin. A bf16 pin reaches here only on a CPU that runs it. */
static void arena_precision(agent_t *a, xq_task_t *t) {
  nn_precision_t own = nn_precision_current();
  const char *why;
  if (a->arena.precision == XQZ__ARENA_PRECISION__ARENA_PRECISION_FP32) {
    t->arena_prec = NN_PRECISION_FP32;
    why = "pinned by the coordinator";
  } else if (a->arena.precision == XQZ__ARENA_PRECISION__ARENA_PRECISION_BF16) {
    t->arena_prec = NN_PRECISION_BF16;
    why = "pinned by the coordinator";
  } else {
    t->arena_prec = own;
    why = "not pinned: the worker's own";
  }
  if (a->arena_logged == 1 + (int)t->arena_prec) return;
  a->arena_logged = 1 + (int)t->arena_prec;
  XQ_LOGI(C, "arena games in %s (%s); self-play stays %s arena_precision=%s",
          nn_precision_name(t->arena_prec), why, nn_precision_name(own),
          nn_precision_name(t->arena_prec));
}

/* Chooses and posts the next task when the play thread is idle. */
static void schedule(agent_t *a, int stopping) {
  if (stopping || a->pause || !xq_play_loop_idle(&a->play) || !a->job_kind) return;
  int64_t now = xq_clock_ms();
  if (a->job_pending && now - a->job_pending_ms < a->o->request_timeout_ms) return;
  if (xq_spool_full(a->spool)) {
    if (!a->spool_full_logged)
      XQ_LOGW(C, "spool full; self-play paused until the coordinator acknowledges games unacked=%zu",
              xq_spool_count(a->spool));
    a->spool_full_logged = 1;
    return;
  }
  a->spool_full_logged = 0;
  xq_task_t t;
  memset(&t, 0, sizeof t);
  t.kind = (xq_task_kind_t)a->job_kind;
  if (t.kind == XQ_TASK_ARENA) {
    bool anchor = a->arena_anchor[0] != 0;
    int ha = want_net(a, a->arena.net_a), hb = anchor || want_net(a, a->arena.net_b);
    if ((!ha && net_failed(a, a->arena.net_a)) || (!hb && net_failed(a, a->arena.net_b))) {
      char why[160];
      snprintf(why, sizeof why, "a net of arena pair %u of match %" PRIu64 " cannot be fetched",
               a->arena.pair_index, a->arena.match_id);
      give_up_job(a, why);
      return;
    }
    if (!ha || !hb) return;
    snprintf(t.anchor_b, sizeof t.anchor_b, "%s", a->arena_anchor);
    t.match_id = a->arena.match_id;
    t.pair_index = a->arena.pair_index;
    xq_netcache_touch(a->o->cache, a->arena.net_a);
    if (!anchor) xq_netcache_touch(a->o->cache, a->arena.net_b);
    xq_netcache_path(a->o->cache, a->arena.net_a, t.path_a, sizeof t.path_a);
    xq_netcache_path(a->o->cache, a->arena.net_b, t.path_b, sizeof t.path_b);
    snprintf(t.opening, sizeof t.opening, "%s", a->arena_fen);
    t.sims = a->arena.sims ? (int)a->arena.sims : 100;
    t.max_plies = a->arena.max_plies && a->arena.max_plies <= 1000 ? (int)a->arena.max_plies : 400;
    float adj = a->arena.adjudicate_material;
    t.adjudicate_material = adj > 0.0f && adj <= 100.0f ? adj : 0.0;
    t.seed = xq_rng_next(&a->rng);
    arena_precision(a, &t);
    a->job_kind = 0;
    a->playing_arena = 1;
    a->playing_match = t.match_id;
    a->playing_pair = t.pair_index;
  } else {
    /* A net announced after the job was given wins until the next job. A replaying worker
     * plays no net: it neither fetches nor waits for one (replay.h). */
    uint64_t net = a->o->replay ? 0
                   : a->announce_stamp > a->job_stamp ? a->announced : a->job_net;
    if (!want_net(a, net)) {
      if (!net_failed(a, net)) return; /* being fetched, or waiting for its turn */
      if (a->playing_net && a->playing_net != net && xq_netcache_has(a->o->cache, a->playing_net)) {
        XQ_LOGW(C, "net cannot be fetched; playing with the last net meanwhile wanted=%016"
                PRIx64 " playing=%016" PRIx64, net, a->playing_net);
        net = a->playing_net;
      } else {
        give_up_job(a, "the job's net cannot be fetched and no earlier net is cached");
        return;
      }
    }
    t.net_id = net;
    if (net) {
      xq_netcache_touch(a->o->cache, net);
      xq_netcache_path(a->o->cache, net, t.net_path, sizeof t.net_path);
    }
    apply_settings(a, &t.cfg);
    t.games = a->job_games > 0 && a->job_games < (int64_t)t.cfg.threads * t.cfg.parallel
                  ? a->job_games : (int64_t)t.cfg.threads * t.cfg.parallel;
    /* A replay task sends every game due (it returns as soon as none is): a cap would let
     * the games that fell due during an arena pair fall further behind at every pair. */
    if (a->o->replay) t.games = INT32_MAX;
    if (net != a->playing_net) XQ_LOGI(C, "playing with net net=%016" PRIx64, net);
    a->playing_net = net;
  }
  xq_play_loop_post(&a->play, &t);
}

/* One INFO line for the arena pairs finished since the last one (each pair alone is a DEBUG
 * line): at most one a minute while pairs finish, so the first pair after a quiet minute is
 * told at once, and the rest at the stop (force). A worker's log had held 249 pair lines of
 * 476 in 70 s (issue 49). Counts are games from net A's (the candidate's) view. */
#define ARENA_SUMMARY_MS 60000
static void arena_summary(agent_t *a, int64_t now, int force) {
  if (!a->arena_pairs || (!force && now - a->arena_since_ms < ARENA_SUMMARY_MS)) return;
  XQ_LOGI(C, "arena pairs done pairs=%" PRIu64 " a_wins=%" PRIu64 " draws=%" PRIu64
          " a_losses=%" PRIu64 " last_match=%" PRIu64 " over_s=%lld", a->arena_pairs,
          a->arena_wins, a->arena_draws, a->arena_losses, a->arena_match,
          (long long)((now - a->arena_since_ms) / 1000));
  a->arena_pairs = a->arena_wins = a->arena_draws = a->arena_losses = 0;
  a->arena_since_ms = now;
}

/* Counts one finished pair for the summary; results from A's view (+1, 0, -1). */
static void arena_count(agent_t *a, const xq_task_t *t) {
  int r[2] = {t->result_a_red, t->result_a_black};
  for (int i = 0; i < 2; i++) {
    if (r[i] > 0) a->arena_wins++;
    else if (r[i] < 0) a->arena_losses++;
    else a->arena_draws++;
  }
  a->arena_pairs++;
  a->arena_match = t->match_id;
  arena_summary(a, xq_clock_ms(), 0);
}

static void task_done(agent_t *a, const xq_task_t *t) {
  if (t->kind == XQ_TASK_ARENA) a->playing_arena = 0;
  if (t->aborted) { /* stopping or pausing: an arena pair cut short has no result */
    XQ_LOGI(C, "running %s abandoned on %s", t->kind == XQ_TASK_ARENA ? "arena pair" : "games",
            a->pause_aborted ? "pause" : "stop");
    if (a->pause_aborted && a->welcomed) send_job_request(a);
    return;
  }
  if (t->rc) XQ_LOGE(C, "task failed error=\"%s: %s\"", xq_strerror(t->rc), t->err);
  if (t->kind == XQ_TASK_ARENA && !t->rc) {
    xq_outbox_entry_t r = {t->match_id, t->pair_index, t->result_a_red, t->result_a_black,
                           (uint32_t)t->reason_a_red, (uint32_t)t->reason_a_black, 0};
    bool dropped;
    xq_outbox_entry_t *e = xq_outbox_add(&a->outbox, &r, &dropped);
    if (dropped)
      XQ_LOGW(C, "arena outbox full: the oldest unanswered result is dropped (its pair is"
              " played again elsewhere) kept=%d", XQ_OUTBOX_MAX);
    if (a->welcomed) send_arena_result(a, e); /* else after the Welcome */
    XQ_LOGD(C, "arena pair done match=%" PRIu64 " pair=%u a_red=%d a_black=%d", t->match_id,
            t->pair_index, t->result_a_red, t->result_a_black);
    arena_count(a, t);
  }
  if (a->welcomed) send_job_request(a);
}

static void progress(agent_t *a, int64_t now) {
  long long pos = atomic_load(&a->play.positions);
  double dt = (double)(now - a->last_progress_ms) / 1000.0;
  XQ_LOGI(C, "progress games=%lld positions=%lld pos_per_s=%.1f net=%016" PRIx64
          " unacked=%zu connected=%d paused=%s precision=%s",
          (long long)atomic_load(&a->play.games), pos,
          dt > 0 ? (double)(pos - a->last_progress_pos) / dt : 0.0, a->playing_net,
          xq_spool_count(a->spool), a->welcomed, a->pause ? xq_pause_reason(a->pause) : "no",
          a->o->replay ? "replay" : nn_precision_name(nn_precision_current()));
  a->last_progress_ms = now;
  a->last_progress_pos = pos;
}

/* Opens what the worker needs before its loop: the net cache directory, the spool (locked),
 * its worker id and campaign, the connection and the game threads. Returns the stage
 * reached (for agent_close): 0 nothing open, 1 the spool, 2 the link, 3 everything. */
static int agent_open(agent_t *a) {
  const xq_worker_opts_t *o = a->o;
  xq_errbuf_t eb = {{0}};
  if (xq_mkdir_p(o->cache, &eb) < 0) {
    XQ_LOGE(C, "cannot create the net cache directory dir=%s error=\"%s\"", o->cache, eb.msg);
    return 0;
  }
  if (xq_spool_open(&a->spool, o->spool, (size_t)o->max_spool, &eb)) {
    XQ_LOGE(C, "cannot open the spool error=\"%s\"", eb.msg);
    return 0;
  }
  /* The default id is stored in the spool, so a restarted worker keeps its id. */
  if (o->id && *o->id) {
    snprintf(a->worker_id, sizeof a->worker_id, "%s", o->id);
  } else if (xq_spool_worker_id(o->spool, a->host, &a->rng, a->worker_id, sizeof a->worker_id,
                                &eb) < 0) {
    XQ_LOGE(C, "cannot read or store the worker id error=\"%s\"", eb.msg);
    return 1;
  }
  /* Spooled games name their campaign in the Hello; an empty spool starts afresh. */
  if (xq_spool_count(a->spool) > 0 && xq_spool_campaign_load(o->spool, &a->campaign_id, &eb))
    XQ_LOGW(C, "spool's campaign unreadable; the coordinator will take its games"
            " error=\"%s\"", eb.msg);
  if (xq_link_open(&a->link, o->coordinator, o->pub, &o->curve, &eb)) {
    XQ_LOGE(C, "cannot open the connection error=\"%s\"", eb.msg);
    return 1;
  }
  if (xq_play_loop_start(&a->play, a->spool, a->worker_id)) return 2;
  a->play.replay = o->replay; /* read by the play thread only, from its first task */
  return 3;
}

/* The machine's side of one loop turn (guest.h): the pause signal, the --active window,
 * the load of other processes (--idle-only) and the resident memory (--max-rss-mb) give
 * the pause bits. A pause stops new tasks at once, lets the running games finish for up
 * to PAUSE_DRAIN_MS and then abandons them, so the machine is quiet within that time;
 * the connection, heartbeats and spool go on. A change is logged and told to the
 * coordinator in a heartbeat at once. */
static void guest_tick(agent_t *a, int64_t now, bool stopping) {
  const xq_worker_opts_t *o = a->o;
  unsigned mask = *a->pause_sig ? XQ_PAUSE_SIGNAL : 0;
  if (o->active_on && !xq_active_in(&o->active, xq_active_minute_now())) mask |= XQ_PAUSE_SCHEDULE;
  if (!a->load_ms || now - a->load_ms >= XQ_IDLE_SAMPLE_MS) {
    uint64_t busy, self;
    if ((o->idle_only > 0 || o->max_rss_mb > 0) && xq_cpu_sample(&busy, &self) == 0) {
      if (a->load_ms && o->idle_only > 0) {
        double ticks = (double)sysconf(_SC_CLK_TCK) * (double)(now - a->load_ms) / 1000.0;
        double other = ((double)(busy - a->load_busy) - (double)(self - a->load_self)) / ticks;
        xq_idle_step(&a->idle, other < 0 ? 0 : other, now);
      }
      a->load_busy = busy;
      a->load_self = self;
    }
    a->load_ms = now;
    if (o->max_rss_mb > 0) {
      a->rss_mb = xq_guest_rss_mb();
      if (a->rss_mb > o->max_rss_mb && xq_play_loop_idle(&a->play)) {
        malloc_trim(0); /* freed task memory back to the system before judging */
        a->rss_mb = xq_guest_rss_mb();
      }
      unsigned bit = a->rss_mb > o->max_rss_mb ? XQ_PAUSE_MEMORY : 0;
      if (bit && !a->memory_bit)
        XQ_LOGW(C, "resident memory above --max-rss-mb; no new games until it is below"
                " (lower --games-per-thread or --threads, or raise --max-rss-mb) rss_mb=%ld"
                " cap_mb=%d", a->rss_mb, o->max_rss_mb);
      a->memory_bit = bit;
    }
  }
  if (a->idle.paused) mask |= XQ_PAUSE_BUSY;
  mask |= a->memory_bit;
  if (stopping) return;
  if (mask != a->pause) {
    if (mask && !a->pause) {
      a->pause_ms = now;
      a->pause_aborted = false;
      XQ_LOGI(C, "pausing: no new games; the running ones get %d s to finish reason=%s"
              " other_load=%.2f", PAUSE_DRAIN_MS / 1000, xq_pause_reason(mask),
              a->idle.last_load);
      xq_play_loop_interrupt(&a->play);
    } else if (!mask) {
      XQ_LOGI(C, "resuming after %lld s paused", (long long)((now - a->pause_ms) / 1000));
      a->pause_ms = 0;
    } else {
      XQ_LOGI(C, "still paused reason=%s", xq_pause_reason(mask));
    }
    a->pause = mask;
    if (a->welcomed) send_heartbeat(a);
  }
  if (a->pause && !a->pause_aborted && now - a->pause_ms >= PAUSE_DRAIN_MS &&
      !xq_play_loop_idle(&a->play)) {
    XQ_LOGI(C, "pausing: abandoning the games still running reason=%s",
            xq_pause_reason(a->pause));
    a->pause_aborted = true;
    xq_play_loop_abort(&a->play);
  }
}

/* After a stop signal: true once the running games are done and the last acks had their
 * moment (or the grace period is over: then finished games are on disk, and it leaves). */
static bool stop_done(agent_t *a, int64_t now, int64_t stop_ms) {
  int idle = xq_play_loop_idle(&a->play);
  if (!((idle && (xq_spool_count(a->spool) == 0 || now - stop_ms > 2000 || !a->welcomed)) ||
        now - stop_ms > STOP_GRACE_MS))
    return false;
  if (!idle) {
    XQ_LOGW(C, "games still running after the grace period; leaving now unacked=%zu",
            xq_spool_count(a->spool));
    _exit(0); /* finished games are on disk already */
  }
  return true;
}

/* Starts over with the coordinator: Hello again, every spooled game to be resent. */
static void rejoin(agent_t *a) {
  a->welcomed = 0;
  a->job_pending = 0;
  xq_spool_reset_sent(a->spool);
  send_hello(a);
}

/* The coordinator side of one loop turn: an announced net, jobs, resends, heartbeats, a
 * Hello to retry, and a lost or silent coordinator. */
static void link_tick(agent_t *a, int64_t now, bool stopping) {
  const xq_worker_opts_t *o = a->o;
  /* Announced net: fetch after the random delay; play it from the next batch. */
  if (a->announce_pending && now >= a->announce_at_ms && !stopping) {
    if (want_net(a, a->announce_pending)) {
      a->announced = a->announce_pending;
      a->announce_stamp = ++a->stamp;
      a->announce_pending = 0;
      XQ_LOGI(C, "switching at the next game boundary net=%016" PRIx64, a->announced);
    } /* else: fetching, or failed (logged by on_chunk) and retried after FETCH_RETRY_MS */
  }
  schedule(a, stopping);
  if (a->welcomed) {
    xq_spool_due(a->spool, now, RESEND_MS, 64, MAX_IN_FLIGHT, send_game, a);
    if (now - a->last_hb_ms >= a->heartbeat_ms) send_heartbeat(a);
  }
  if (a->job_retry_ms && now >= a->job_retry_ms && !stopping) {
    a->job_retry_ms = 0;
    if (a->welcomed && !a->job_pending && !a->job_kind) send_job_request(a);
  }
  if (!a->welcomed && a->hello_retry_ms && now >= a->hello_retry_ms) {
    a->hello_retry_ms = 0;
    send_hello(a);
  }
  /* The DEALER connected again: the coordinator restarted and forgot this worker. */
  if (a->link.reconnected) {
    a->link.reconnected = 0;
    XQ_LOGI(C, "connection re-established; saying hello and resending unacked=%zu",
            xq_spool_count(a->spool));
    rejoin(a);
  }
  /* No answer to any request for too long: the coordinator is gone or restarted. */
  if (a->first_unanswered_ms && now - a->first_unanswered_ms > o->request_timeout_ms &&
      now >= a->link.next_connect_ms) {
    const char *hint = xq_link_handshake_hint(&a->link);
    if (hint)
      XQ_LOGW(C, "coordinator not answering: %s; reconnecting coordinator=%s"
              " handshake_failures=%d unacked=%zu attempt=%" PRId64, hint, o->coordinator,
              a->link.handshake_failures, xq_spool_count(a->spool), a->link.reconnects + 1);
    else if (!a->link.connects)
      XQ_LOGW(C, "coordinator not answering: no connection to %s (nothing listens there:"
              " the coordinator is not running, or the host or port is wrong, or a firewall"
              " drops it); reconnecting coordinator=%s unacked=%zu attempt=%" PRId64,
              o->coordinator, o->coordinator, xq_spool_count(a->spool), a->link.reconnects + 1);
    else
      XQ_LOGW(C, "coordinator not answering; reconnecting coordinator=%s unacked=%zu"
              " attempt=%" PRId64, o->coordinator, xq_spool_count(a->spool),
              a->link.reconnects + 1);
    xq_errbuf_t eb = {{0}};
    if (xq_link_reconnect(&a->link, &eb)) XQ_LOGE(C, "reconnect failed error=\"%s\"", eb.msg);
    a->first_unanswered_ms = 0;
    rejoin(a);
  }
}

int xq_worker_run(const xq_worker_opts_t *o, volatile sig_atomic_t *stop,
                  volatile sig_atomic_t *pause) {
  agent_t *a = calloc(1, sizeof *a);
  if (!a) return 1;
  a->o = o;
  a->pause_sig = pause;
  a->idle.limit = o->idle_only;
  if (gethostname(a->host, sizeof a->host - 1)) snprintf(a->host, sizeof a->host, "unknown");
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  xq_rng_seed(&a->rng, (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ ((uint64_t)getpid() << 40));
  int code = 1;
  int opened = agent_open(a);
  if (opened < 3) goto out;
  const char *blas_was = nn_blas_core_replaced();
  XQ_LOGI(C, "started worker=%s coordinator=%s pub=%s threads=%d games_per_thread=%d unacked=%zu"
          " blas_core=%s blas_fallback=%s", a->worker_id, o->coordinator, o->pub, o->threads,
          o->games_per_thread, xq_spool_count(a->spool), nn_blas_core(),
          blas_was ? blas_was : "none");
  prune_cache(a);
  a->heartbeat_ms = 5000;
  a->last_progress_ms = xq_clock_ms();
  a->arena_since_ms = a->last_progress_ms; /* the first summary covers the time since start */
  send_hello(a);
  int64_t stop_ms = 0;
  bool aborted = false;
  for (;;) {
    int64_t now = xq_clock_ms();
    if (*stop && !stop_ms) {
      stop_ms = now;
      XQ_LOGI(C, "stopping: the running games get %d s to finish unacked=%zu", STOP_ABORT_MS / 1000,
              xq_spool_count(a->spool));
      xq_play_loop_interrupt(&a->play);
    }
    if (stop_ms && now - stop_ms >= STOP_ABORT_MS && !aborted) {
      aborted = true;
      if (!xq_play_loop_idle(&a->play))
        XQ_LOGI(C, "stopping: abandoning the games still running");
      xq_play_loop_abort(&a->play);
    }
    xq_task_t t;
    if (xq_play_loop_take(&a->play, &t)) task_done(a, &t);
    if (stop_ms && stop_done(a, now, stop_ms)) break;
    while (!a->fatal && poll_once(a, 0)) {
    }
    if (a->fatal) {
      xq_play_loop_interrupt(&a->play);
      break;
    }
    now = xq_clock_ms();
    guest_tick(a, now, stop_ms != 0);
    link_tick(a, now, stop_ms != 0);
    if (now - a->last_progress_ms >= (int64_t)o->progress_s * 1000) progress(a, now);
    arena_summary(a, now, 0);
    poll_once(a, 100);
  }
  arena_summary(a, xq_clock_ms(), 1);
  progress(a, xq_clock_ms());
  XQ_LOGI(C, "stopped unacked_in_spool=%zu", xq_spool_count(a->spool));
  code = a->fatal ? 1 : 0;
  xq_play_loop_join(&a->play);
out:
  if (opened >= 2) {
    xq_netfetch_close(&a->fetch);
    xq_link_close(&a->link);
  }
  if (opened >= 1) xq_spool_free(&a->spool);
  free(a);
  return code;
}
