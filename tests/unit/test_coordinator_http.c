/*
 * test_coordinator_http.c: the coordinator's HTTP endpoint (coordinator/web/http.c, web.c and
 * metrics.c, linked from the coordinator's library, with stand-ins for status.c over a
 * hand-filled Status), on
 * 127.0.0.1 with an ephemeral port and the server's loop in a thread of its own (and the
 * head parser, http_parse.c, alone on a table and 200k mutated heads): the
 * routes (the compiled-in page, /api/status, /api/promotions paged to the end, ?after=, and 400 for an after that is no match id), GET and HEAD with exact Content-Length, 404, 405 with Allow,
 * an oversized head (431), malformed request lines (400), random bytes (never a crash, the
 * server goes on), a silent client cut off at the deadline, the connection cap, and /metrics
 * as valid Prometheus text (every sample `name{labels} value` after its TYPE line, hostile
 * label values escaped).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "status.h"
#include "web/http.h"
#include "web/http_parse.h"
#include "web/metrics.h"
#include "web_routes.h"
#include "support/clock.h"
#include "support/rng.h"

/* The page's bytes, generated from dashboard.html at build time (web.c serves them). */
extern const char xqc_dashboard_html[];
extern const size_t xqc_dashboard_html_len;

/* ---- a server on its own loop thread ---- */

typedef struct {
  uv_loop_t loop;
  uv_async_t stop;
  xqc_http_t *http;
  pthread_t thread;
  int port;
} server_t;

static server_t g_srv;

static void on_stop(uv_async_t *a) {
  server_t *s = a->data;
  xqc_http_stop(&s->http);
  uv_close((uv_handle_t *)&s->stop, NULL);
}

static void *loop_main(void *arg) {
  server_t *s = arg;
  uv_run(&s->loop, UV_RUN_DEFAULT);
  return NULL;
}

/* A hand-filled Status with two workers, one of them with a hostile id and host. */
static char g_bad_id[] = {'w', '"', '\\', '\n', (char)0xff, (char)0xc3, (char)0xa9, 'x', 0};
static Xqz__WorkerStatus g_w[2];
static Xqz__WorkerStatus *g_wp[2] = {&g_w[0], &g_w[1]};
static Xqz__Setting g_lim[2];
static Xqz__Setting *g_limp[2] = {&g_lim[0], &g_lim[1]};
static Xqz__LossPoint g_loss;
static uint64_t g_reasons[9] = {0, 5, 1, 2, 0, 0, 3, 0, 4};
static Xqz__Balance g_bal;
static Xqz__Status g_st;

static void fill_status(void) {
  xqz__status__init(&g_st);
  g_st.campaign = "camp";
  g_st.software_version = "xqzero 0.test";
  g_st.gating_mode = "sprt";
  g_st.arena_precision = "bf16";
  g_st.best_net_id = 0x1234;
  g_st.campaign_id = 0xfeedc0de0badf00dull;
  g_st.games = 42;
  g_st.positions = 4200;
  g_st.window_positions = 4000;
  g_st.window_capacity = 50000;
  g_st.positions_per_s = 12.5;
  g_st.trainer_step = 300;
  g_st.best_elo = NAN; /* must come out as NaN, still parseable */
  g_st.promotions = 3;
  g_st.workers = 2;
  g_st.uptime_s = 77;
  xqz__loss_point__init(&g_loss);
  g_loss.step = 300;
  g_loss.loss = 2.5f;
  g_loss.policy = 2.0f;
  g_loss.value = 0.5f;
  g_st.last_loss = &g_loss;
  for (int i = 0; i < 2; i++) xqz__worker_status__init(&g_w[i]);
  g_w[0].worker_id = "w1";
  g_w[0].host = "lab-01";
  g_w[0].software_version = "xqzero 0.test";
  g_w[0].games = 12;
  g_w[0].avg_plies = 81.5;
  g_w[0].last_seen_ms_ago = 1500;
  g_w[0].alive = true;
  g_w[0].by_reason = g_reasons;
  g_w[0].n_by_reason = 9;
  g_w[1].worker_id = g_bad_id;
  g_w[1].host = "h\"ost";
  g_w[1].software_version = "";
  g_w[1].games = 30;
  g_w[1].faults = 7;
  g_st.worker_list = g_wp;
  g_st.n_worker_list = 2;
  for (int i = 0; i < 2; i++) xqz__setting__init(&g_lim[i]);
  g_lim[0].name = "max_message_bytes";
  g_lim[0].value = 1048576;
  g_lim[1].name = "max_peer_errors";
  g_lim[1].value = 20;
  g_st.limits = g_limp;
  g_st.n_limits = 2;
  xqz__balance__init(&g_bal);
  g_bal.state = "trainer-bound";
  g_bal.advice = "give the trainer more cores";
  g_bal.reuse = 0.5;
  g_bal.reuse_target = 4;
  g_bal.trainer_busy = NAN; /* not measured: NaN in /metrics */
  g_st.balance = &g_bal;
}

/* ---- stand-ins for status.c (the routes' data source), over the hand-filled Status ---- */

static bool g_fail_status;

int xqc_status_build(xqc_t *c, Xqz__Status **out) {
  (void)c;
  *out = g_fail_status ? NULL : &g_st;
  return g_fail_status ? XQ_EIO : 0;
}

void xqc_status_free(Xqz__Status **st) { *st = NULL; }

/* 2500 decided matches with ids 10, 20, ..., so /api/promotions must page three times. */
#define N_MATCHES 2500
static int g_promotion_calls;

int xqc_promotions_build(xqc_t *c, uint64_t after, Xqz__Promotions **out) {
  (void)c;
  g_promotion_calls++;
  Xqz__Promotions *p = calloc(1, sizeof *p);
  assert_non_null(p);
  xqz__promotions__init(p);
  p->matches = calloc(XQC_PROMOTIONS_MAX, sizeof *p->matches);
  assert_non_null(p->matches);
  for (uint64_t id = 10; id <= 10 * N_MATCHES && p->n_matches < XQC_PROMOTIONS_MAX; id += 10) {
    if (id <= after) continue;
    Xqz__MatchStatus *m = calloc(1, sizeof *m);
    assert_non_null(m);
    xqz__match_status__init(m);
    m->match_id = id;
    m->decision = id % 20 ? "rejected" : "promoted";
    m->wins = 3;
    p->matches[p->n_matches++] = m;
  }
  *out = p;
  return 0;
}

void xqc_promotions_free(Xqz__Promotions **pp) {
  Xqz__Promotions *p = *pp;
  for (size_t i = 0; i < p->n_matches; i++) free(p->matches[i]);
  free(p->matches);
  free(p);
  *pp = NULL;
}

static xqc_t g_c; /* the routes only hand it to the stand-ins above */

static void start_server(const xqc_http_limits_t *lim) {
  fill_status();
  memset(&g_srv, 0, sizeof g_srv);
  assert_int_equal(uv_loop_init(&g_srv.loop), 0);
  xq_errbuf_t eb = {{0}};
  int rc = xqc_http_start(&g_srv.http, &g_srv.loop, "127.0.0.1:0", lim, xqc_web_on_request, &g_c,
                          &eb);
  if (rc) fail_msg("server did not start: %s", eb.msg);
  g_srv.port = xqc_http_port(g_srv.http);
  assert_true(g_srv.port > 0);
  uv_async_init(&g_srv.loop, &g_srv.stop, on_stop);
  g_srv.stop.data = &g_srv;
  assert_int_equal(pthread_create(&g_srv.thread, NULL, loop_main, &g_srv), 0);
}

static int setup(void **state) {
  (void)state;
  xqc_http_limits_t lim = {0, 400, 0}; /* a short deadline keeps the slow-client test fast */
  start_server(&lim);
  return 0;
}

static int setup_cap(void **state) {
  (void)state;
  xqc_http_limits_t lim = {0, 3000, 8};
  start_server(&lim);
  return 0;
}

/* Stops the server; every handle must be closed and every connection freed (ASan). */
static int teardown(void **state) {
  (void)state;
  uv_async_send(&g_srv.stop);
  pthread_join(g_srv.thread, NULL);
  assert_int_equal(uv_loop_close(&g_srv.loop), 0);
  return 0;
}

/* ---- a blocking client ---- */

static int connect_srv(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  assert_true(fd >= 0);
  struct sockaddr_in a;
  memset(&a, 0, sizeof a);
  a.sin_family = AF_INET;
  a.sin_port = htons((uint16_t)g_srv.port);
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
  struct timeval tv = {5, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

static void send_all(int fd, const void *p, size_t n) {
  const char *b = p;
  while (n) {
    ssize_t k = send(fd, b, n, MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return; /* the server may close early on bad input: not an error here */
    b += k;
    n -= (size_t)k;
  }
}

/* Reads until the server closes; returns the byte count (buf NUL-terminated). */
static size_t read_all(int fd, char *buf, size_t cap) {
  size_t n = 0;
  for (;;) {
    ssize_t k = recv(fd, buf + n, cap - 1 - n, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    n += (size_t)k;
    if (n == cap - 1) break;
  }
  buf[n] = '\0';
  return n;
}

/* One exchange: sends req (len bytes), reads the whole response. */
static size_t exchange(const void *req, size_t len, char *buf, size_t cap) {
  int fd = connect_srv();
  send_all(fd, req, len);
  size_t n = read_all(fd, buf, cap);
  close(fd);
  return n;
}

static char g_buf[1 << 20];

static int status_of(const char *resp) {
  int code = 0;
  if (sscanf(resp, "HTTP/1.1 %d ", &code) != 1) return -1;
  return code;
}

/* Value of a response header (case as sent), or NULL. */
static const char *header(const char *resp, const char *name, char *out, size_t cap) {
  const char *end = strstr(resp, "\r\n\r\n");
  size_t nl = strlen(name);
  for (const char *p = strstr(resp, "\r\n"); p && p < end; p = strstr(p + 2, "\r\n")) {
    if (strncmp(p + 2, name, nl) == 0 && p[2 + nl] == ':') {
      const char *v = p + 2 + nl + 1;
      while (*v == ' ') v++;
      size_t k = strcspn(v, "\r");
      if (k >= cap) k = cap - 1;
      memcpy(out, v, k);
      out[k] = '\0';
      return out;
    }
  }
  return NULL;
}

static const char *body_of(const char *resp) {
  const char *e = strstr(resp, "\r\n\r\n");
  return e ? e + 4 : NULL;
}

static size_t get(const char *req) { return exchange(req, strlen(req), g_buf, sizeof g_buf); }

/* ---- the tests ---- */

static void test_get_and_head(void **state) {
  (void)state;
  char v[128];
  get("GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  assert_int_equal(status_of(g_buf), 200);
  assert_string_equal(header(g_buf, "Content-Type", v, sizeof v), "text/html; charset=utf-8");
  assert_string_equal(header(g_buf, "Connection", v, sizeof v), "close");
  assert_int_equal(atoi(header(g_buf, "Content-Length", v, sizeof v)), (int)xqc_dashboard_html_len);
  assert_int_equal(strlen(body_of(g_buf)), xqc_dashboard_html_len);
  assert_non_null(strstr(body_of(g_buf), "id=\"elo-chart\""));
  /* Self-contained: nothing loaded from elsewhere. */
  const char *external[] = {"src=\"http", "href=\"http", "url(", "@import", "//cdn"};
  for (size_t i = 0; i < sizeof external / sizeof external[0]; i++)
    if (strstr(body_of(g_buf), external[i])) fail_msg("the page loads something: %s", external[i]);
  /* HEAD: the same headers, no body. */
  get("HEAD / HTTP/1.1\r\n\r\n");
  assert_int_equal(status_of(g_buf), 200);
  assert_int_equal(atoi(header(g_buf, "Content-Length", v, sizeof v)), (int)xqc_dashboard_html_len);
  assert_string_equal(body_of(g_buf), "");
  /* HTTP/1.0, bare LF line ends, and a query string split off the path. */
  get("GET /index.html?x=1 HTTP/1.0\n\n");
  assert_int_equal(status_of(g_buf), 200);
  assert_int_equal(strlen(body_of(g_buf)), xqc_dashboard_html_len);
}

static void test_errors(void **state) {
  (void)state;
  char v[128];
  get("GET /nothing-here HTTP/1.1\r\n\r\n");
  assert_int_equal(status_of(g_buf), 404);
  assert_true(strlen(body_of(g_buf)) > 0);
  get("HEAD /nothing-here HTTP/1.1\r\n\r\n"); /* the length of the body it does not send */
  assert_int_equal(status_of(g_buf), 404);
  assert_int_equal(atoi(header(g_buf, "Content-Length", v, sizeof v)) > 0, 1);
  assert_string_equal(body_of(g_buf), "");
  get("POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc");
  assert_int_equal(status_of(g_buf), 405);
  assert_string_equal(header(g_buf, "Allow", v, sizeof v), "GET, HEAD");
  get("get / HTTP/1.1\r\n\r\n"); /* methods are case-sensitive: an unknown one */
  assert_int_equal(status_of(g_buf), 405);
  const char *bad[] = {
    "GET\r\n\r\n", "GET /\r\n\r\n", "GET / HTTP/2.0\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n",
    "GET x HTTP/1.1\r\n\r\n", "G(T / HTTP/1.1\r\n\r\n", "GET / HTTP/1.1 x\r\n\r\n",
    "GET /\x01 HTTP/1.1\r\n\r\n", "GET / HTTP/1.1\r\nno colon here\r\n\r\n",
    "GET / HTTP/1.1\r\n: empty name\r\n\r\n", "\r\n\r\n",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    get(bad[i]);
    if (status_of(g_buf) != 400) fail_msg("request %zu: want 400, got: %.60s", i, g_buf);
  }
  /* A NUL byte inside the head. */
  static const char nul[] = "GET / HTTP/1.1\r\nX: a\0b\r\n\r\n";
  exchange(nul, sizeof nul - 1, g_buf, sizeof g_buf);
  assert_int_equal(status_of(g_buf), 400);
}

static void test_oversized_head(void **state) {
  (void)state;
  size_t n = 3 * XQC_HTTP_HEAD_MAX;
  char *req = malloc(n);
  assert_non_null(req);
  memcpy(req, "GET / HTTP/1.1\r\nX-Pad: ", 23);
  memset(req + 23, 'a', n - 23);
  exchange(req, n, g_buf, sizeof g_buf);
  assert_int_equal(status_of(g_buf), 431);
  /* Just under the limit is fine. */
  size_t m = XQC_HTTP_HEAD_MAX - 40;
  memset(req + 23, 'a', m - 23);
  memcpy(req + m, "\r\n\r\n", 4);
  exchange(req, m + 4, g_buf, sizeof g_buf);
  assert_int_equal(status_of(g_buf), 200);
  free(req);
}

/* Random bytes, with and without a blank line, then with the client closing its side:
 * every exchange ends (answer or close), and the server still answers afterwards. */
static void test_garbage(void **state) {
  (void)state;
  xq_rng_t rng;
  xq_rng_seed(&rng, 7);
  char req[3000];
  for (int i = 0; i < 150; i++) {
    size_t n = 1 + (size_t)(xq_rng_next(&rng) % (sizeof req - 8));
    for (size_t k = 0; k < n; k++) req[k] = (char)(xq_rng_next(&rng) & 0xff);
    if (i % 3 == 0) memcpy(req, "GET ", 4);
    if (i % 2 == 0) memcpy(req + n, "\r\n\r\n", 4), n += 4;
    int fd = connect_srv();
    send_all(fd, req, n);
    shutdown(fd, SHUT_WR);
    read_all(fd, g_buf, sizeof g_buf);
    close(fd);
    int code = status_of(g_buf);
    if (g_buf[0] && code != 400 && code != 404 && code != 405 && code != 431 && code != 200)
      fail_msg("garbage %d: unexpected answer %.60s", i, g_buf);
  }
  get("GET / HTTP/1.1\r\n\r\n");
  assert_int_equal(status_of(g_buf), 200);
}

/* A client that sends half a request and waits is cut off at the deadline (400 ms). */
static void test_slow_client(void **state) {
  (void)state;
  int fd = connect_srv();
  send_all(fd, "GET / HTT", 9);
  double t0 = xq_clock_s();
  size_t n = read_all(fd, g_buf, sizeof g_buf);
  double dt = xq_clock_s() - t0;
  close(fd);
  assert_int_equal(n, 0);
  if (dt < 0.2 || dt > 3.0) fail_msg("cut off after %.2f s, want about 0.4 s", dt);
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

/* Past max_conns (8) a new connection is closed at once; once some end, service resumes. */
static void test_connection_cap(void **state) {
  (void)state;
  int idle[8];
  for (int i = 0; i < 8; i++) idle[i] = connect_srv();
  sleep_ms(50); /* let the loop accept them all */
  int fd = connect_srv();
  double t0 = xq_clock_s();
  size_t n = read_all(fd, g_buf, sizeof g_buf);
  double dt = xq_clock_s() - t0;
  close(fd);
  assert_int_equal(n, 0);
  if (dt > 1.5) fail_msg("connection over the cap closed after %.2f s, want at once", dt);
  for (int i = 0; i < 8; i++) close(idle[i]);
  /* The server frees a slot once it has seen the close: give it a moment under load. */
  for (int tries = 0; tries < 100; tries++) {
    sleep_ms(20);
    get("GET / HTTP/1.1\r\n\r\n");
    if (status_of(g_buf) == 200) break;
  }
  assert_int_equal(status_of(g_buf), 200);
}

/* ---- Prometheus text ---- */

static bool name_char(int ch, bool first) {
  return isalpha(ch) || ch == '_' || ch == ':' || (!first && isdigit(ch));
}

/* Parses one sample line `name{l="v",...} value`; returns the name length, 0 if invalid. */
static size_t parse_sample(const char *line) {
  const char *p = line;
  if (!name_char((unsigned char)*p, true)) return 0;
  while (name_char((unsigned char)*p, false)) p++;
  size_t nlen = (size_t)(p - line);
  if (*p == '{') {
    p++;
    while (*p != '}') {
      if (!name_char((unsigned char)*p, true)) return 0;
      while (name_char((unsigned char)*p, false)) p++;
      if (*p++ != '=' || *p++ != '"') return 0;
      while (*p != '"') {
        if (*p == '\0' || *p == '\n') return 0;
        if (*p == '\\') {
          p++;
          if (*p != '\\' && *p != '"' && *p != 'n') return 0;
        }
        p++;
      }
      p++;
      if (*p == ',') p++;
      else if (*p != '}') return 0;
    }
    p++;
  }
  if (*p++ != ' ') return 0;
  if (strcmp(p, "NaN") == 0 || strcmp(p, "+Inf") == 0 || strcmp(p, "-Inf") == 0) return nlen;
  char *end;
  strtod(p, &end);
  return end != p && *end == '\0' ? nlen : 0;
}

static void check_prometheus(char *text) {
  char typed[128][64];
  int ntyped = 0, samples = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
    if (strncmp(line, "# TYPE ", 7) == 0) {
      char name[64], type[32];
      assert_int_equal(sscanf(line + 7, "%63s %31s", name, type), 2);
      if (strcmp(type, "counter") && strcmp(type, "gauge")) fail_msg("bad type: %s", line);
      for (int i = 0; i < ntyped; i++)
        if (strcmp(typed[i], name) == 0) fail_msg("TYPE twice: %s", line);
      assert_true(ntyped < 128);
      snprintf(typed[ntyped++], sizeof typed[0], "%s", name);
      continue;
    }
    if (strncmp(line, "# HELP ", 7) == 0) continue;
    size_t nlen = parse_sample(line);
    if (nlen == 0) fail_msg("not a sample line: '%s'", line);
    bool found = false;
    for (int i = 0; i < ntyped && !found; i++)
      found = strlen(typed[i]) == nlen && strncmp(typed[i], line, nlen) == 0;
    if (!found) fail_msg("sample before its TYPE line: '%s'", line);
    samples++;
  }
  assert_true(samples > 20);
}

static void test_metrics(void **state) {
  (void)state;
  char v[128];
  get("GET /metrics HTTP/1.1\r\n\r\n");
  assert_int_equal(status_of(g_buf), 200);
  assert_string_equal(header(g_buf, "Content-Type", v, sizeof v), XQC_METRICS_CONTENT_TYPE);
  char *body = strdup(body_of(g_buf));
  assert_int_equal(atoi(header(g_buf, "Content-Length", v, sizeof v)), (int)strlen(body));
  /* Values and labels as filled in. */
  const char *want[] = {
    "xqz_games_total 42\n", "xqz_positions_total 4200\n", "xqz_window_capacity 50000\n",
    "xqz_positions_per_second 12.5\n", "xqz_best_elo NaN\n", "xqz_trainer_step 300\n",
    "xqz_loss{kind=\"policy\"} 2\n", "xqz_workers_alive 2\n",
    "xqz_worker_games_total{worker=\"w1\",host=\"lab-01\",version=\"xqzero 0.test\"} 12\n",
    "xqz_worker_avg_plies{worker=\"w1\",host=\"lab-01\",version=\"xqzero 0.test\"} 81.5\n",
    "xqz_worker_last_seen_seconds{worker=\"w1\",host=\"lab-01\",version=\"xqzero 0.test\"} 1.5\n",
    /* quote, backslash, newline escaped; the invalid byte 0xff replaced, é kept */
    "xqz_worker_faults_total{worker=\"w\\\"\\\\\\n?\xc3\xa9x\",host=\"h\\\"ost\",version=\"\"} 7\n",
    "xqz_limit{name=\"max_message_bytes\"} 1048576\n", "xqz_limit{name=\"max_peer_errors\"} 20\n",
    "xqz_games_by_reason_total{reason=\"checkmate\"} 5\n",
    "xqz_games_by_reason_total{reason=\"resign\"} 4\n",
    "xqz_info{campaign=\"camp\",campaign_id=\"feedc0de0badf00d\",version=",
    "gating_mode=\"sprt\",arena_precision=\"bf16\",best_net=",
    "xqz_balance_state{state=\"trainer-bound\"} 1\n",
    "xqz_balance_state{state=\"balanced\"} 0\n", "xqz_balance_reuse 0.5\n",
    "xqz_balance_reuse_target 4\n", "xqz_trainer_busy_ratio NaN\n",
    "# TYPE xqz_games_total counter\n", "# TYPE xqz_window_positions gauge\n",
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
    if (!strstr(body, want[i])) fail_msg("/metrics lacks: %s", want[i]);
  check_prometheus(body);
  free(body);
}

/* ---- the head parser on its own ---- */

/* Parses a copy of text (heap, exact size + 1, so ASan sees any overread). */
static int parse(const char *text, size_t len, xqc_http_request_t *rq, char **copy) {
  *copy = malloc(len + 1);
  assert_non_null(*copy);
  memcpy(*copy, text, len);
  const char *why = NULL;
  int st = xqc_http_parse_head(*copy, len, rq, &why);
  if (st) assert_true(why && why[0] && why[strlen(why) - 1] == '\n');
  return st;
}

/* The properties every answer has: 0 only for GET/HEAD of a printable '/' path. */
static void check_parse_result(int st, const xqc_http_request_t *rq) {
  assert_true(st == 0 || st == 400 || st == 405);
  if (st == 405) assert_non_null(rq->method);
  if (st) return;
  assert_true(strcmp(rq->method, "GET") == 0 || strcmp(rq->method, "HEAD") == 0);
  assert_int_equal(rq->path[0], '/');
  for (const char *p = rq->path; *p; p++) assert_true(*p > 0x20 && *p < 0x7f && *p != '?');
}

static void test_parse_head(void **state) {
  (void)state;
  static const struct {
    const char *head;
    int status;
    const char *method, *path, *query;
  } cases[] = {
    {"GET / HTTP/1.1\r\n\r\n", 0, "GET", "/", ""},
    {"HEAD /a/b?c=d&e HTTP/1.0\n\n", 0, "HEAD", "/a/b", "c=d&e"},
    {"GET /x HTTP/1.1\r\nHost: a\r\nX-Y:\tz\r\n\r\n", 0, "GET", "/x", ""},
    {"DELETE /x HTTP/1.1\r\n\r\n", 405, "DELETE", NULL, NULL},
    {"HEAD /x HTTP/1.1\r\nbroken\r\n\r\n", 400, "HEAD", NULL, NULL},
    {"GET /x HTTP/1.1\r\nA: \x01\r\n\r\n", 400, "GET", NULL, NULL},
    {"GET /x\x7f HTTP/1.1\r\n\r\n", 400, "GET", NULL, NULL},
    {"G@T / HTTP/1.1\r\n\r\n", 400, NULL, NULL, NULL},
    {"GET / HTTP/1.1", 400, NULL, NULL, NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    xqc_http_request_t rq;
    char *copy;
    int st = parse(cases[i].head, strlen(cases[i].head), &rq, &copy);
    if (st != cases[i].status) fail_msg("case %zu: status %d, want %d", i, st, cases[i].status);
    check_parse_result(st, &rq);
    if (cases[i].method) assert_string_equal(rq.method, cases[i].method);
    else assert_null(rq.method);
    if (cases[i].path) assert_string_equal(rq.path, cases[i].path);
    if (cases[i].query) assert_string_equal(rq.query, cases[i].query);
    free(copy);
  }
  /* head_end: the first blank line, resumed where the last search stopped. */
  assert_int_equal(xqc_http_head_end("GET / HTTP/1.1\r\n\r\nrest", 22, 0), 18);
  assert_int_equal(xqc_http_head_end("GET / HTTP/1.1\n\n", 16, 13), 16);
  assert_int_equal(xqc_http_head_end("GET / HTTP/1.1\r\n\r", 17, 0), 0);
  /* Valid requests with random bytes overwritten, and pure noise: the properties hold. */
  xq_rng_t rng;
  xq_rng_seed(&rng, 11);
  static const char *seeds[] = {"GET /metrics?x HTTP/1.1\r\nHost: h\r\n\r\n",
                                "HEAD / HTTP/1.0\n\n"};
  char buf[256];
  int accepted = 0;
  for (int i = 0; i < 200000; i++) {
    size_t n;
    if (i % 4 == 3) {
      n = 1 + (size_t)xq_rng_below(&rng, sizeof buf);
      for (size_t k = 0; k < n; k++) buf[k] = (char)xq_rng_below(&rng, 256);
    } else {
      const char *sd = seeds[i & 1];
      n = strlen(sd);
      memcpy(buf, sd, n);
      for (int m = 1 + (int)xq_rng_below(&rng, 3); m > 0; m--)
        buf[xq_rng_below(&rng, n)] = (char)xq_rng_below(&rng, 256);
    }
    xqc_http_request_t rq;
    char *copy;
    int st = parse(buf, n, &rq, &copy);
    check_parse_result(st, &rq);
    accepted += st == 0;
    free(copy);
  }
  assert_true(accepted > 1000); /* mutations in header values and the query still pass */
}

static size_t count(const char *hay, const char *needle) {
  size_t n = 0;
  for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle)) n++;
  return n;
}

static void test_api(void **state) {
  (void)state;
  char v[128];
  get("GET /api/status HTTP/1.1\r\n\r\n");
  assert_int_equal(status_of(g_buf), 200);
  assert_string_equal(header(g_buf, "Content-Type", v, sizeof v), "application/json");
  const char *b = body_of(g_buf);
  assert_int_equal(b[0], '{');
  assert_int_equal(b[strlen(b) - 1], '}');
  assert_non_null(strstr(b, "\"campaign\":\"camp\""));
  assert_non_null(strstr(b, "\"worker_id\":\"w1\""));
  /* Every decided match, paged out of the database three times. */
  g_promotion_calls = 0;
  get("GET /api/promotions HTTP/1.1\r\n\r\n");
  assert_int_equal(status_of(g_buf), 200);
  b = body_of(g_buf);
  assert_int_equal(b[0], '[');
  assert_int_equal(count(b, "\"match_id\":"), N_MATCHES);
  assert_int_equal(count(b, "\"decision\":\"promoted\""), N_MATCHES / 2);
  assert_int_equal(g_promotion_calls, 3);
  assert_non_null(strstr(b, "\"match_id\":25000,"));
  get("GET /api/promotions?x=1&after=24980 HTTP/1.1\r\n\r\n");
  b = body_of(g_buf);
  assert_int_equal(count(b, "\"match_id\":"), 2);
  assert_non_null(strstr(b, "\"match_id\":24990,"));
  get("GET /api/promotions?after=25000 HTTP/1.1\r\n\r\n");
  assert_string_equal(body_of(g_buf), "[]");
  /* Issue 49 item 11: an after that is not a match id is a 400 naming the fix, never the
   * whole list. */
  static const char *const bad_after[] = {"abc", "", "-5", "12x", "99999999999999999999999"};
  for (size_t i = 0; i < sizeof bad_after / sizeof bad_after[0]; i++) {
    char rq[128];
    snprintf(rq, sizeof rq, "GET /api/promotions?after=%s&x=1 HTTP/1.1\r\n\r\n", bad_after[i]);
    get(rq);
    if (status_of(g_buf) != 400) fail_msg("after=%s: status %d, want 400", bad_after[i], status_of(g_buf));
    assert_non_null(strstr(body_of(g_buf), "after must be a match id"));
  }
  get("GET /api/promotions?after=24990&x=1 HTTP/1.1\r\n\r\n");
  assert_int_equal(status_of(g_buf), 200);
  assert_int_equal(count(body_of(g_buf), "\"match_id\":"), 1);
  /* A failing status source is a 500, not a crash or an empty 200. */
  g_fail_status = true;
  get("GET /api/status HTTP/1.1\r\n\r\n");
  assert_int_equal(status_of(g_buf), 500);
  get("GET /metrics HTTP/1.1\r\n\r\n");
  assert_int_equal(status_of(g_buf), 500);
  g_fail_status = false;
}

/* xqc_web_start: "" is off; a taken port is an error naming the address and the way out. */
static void test_web_start(void **state) {
  (void)state;
  uv_loop_t loop;
  assert_int_equal(uv_loop_init(&loop), 0);
  xqc_t *a = calloc(1, sizeof *a), *b = calloc(1, sizeof *b);
  assert_non_null(a);
  assert_non_null(b);
  a->loop = b->loop = &loop;
  xq_errbuf_t eb = {{0}};
  assert_int_equal(xqc_web_start(a, &eb), 0); /* cfg.http is "" */
  assert_null(a->http);
  snprintf(a->cfg.http, sizeof a->cfg.http, "127.0.0.1:0");
  assert_int_equal(xqc_web_start(a, &eb), 0);
  assert_non_null(a->http);
  snprintf(b->cfg.http, sizeof b->cfg.http, "127.0.0.1:%d", xqc_http_port(a->http));
  assert_int_equal(xqc_web_start(b, &eb), XQ_EIO);
  assert_null(b->http);
  if (!strstr(eb.msg, b->cfg.http) || !strstr(eb.msg, "--http=")) fail_msg("unhelpful: %s", eb.msg);
  snprintf(b->cfg.http, sizeof b->cfg.http, "no-port-here");
  assert_int_equal(xqc_web_start(b, &eb), XQ_EINVAL);
  snprintf(b->cfg.http, sizeof b->cfg.http, "127.0.0.1:99999");
  assert_int_equal(xqc_web_start(b, &eb), XQ_EINVAL);
  xqc_web_stop(a);
  xqc_web_stop(b); /* NULL-safe */
  uv_run(&loop, UV_RUN_DEFAULT);
  assert_int_equal(uv_loop_close(&loop), 0);
  free(a);
  free(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test_setup_teardown(test_get_and_head, setup, teardown),
    cmocka_unit_test_setup_teardown(test_errors, setup, teardown),
    cmocka_unit_test_setup_teardown(test_oversized_head, setup, teardown),
    cmocka_unit_test_setup_teardown(test_garbage, setup, teardown),
    cmocka_unit_test_setup_teardown(test_slow_client, setup, teardown),
    cmocka_unit_test_setup_teardown(test_connection_cap, setup_cap, teardown),
    cmocka_unit_test_setup_teardown(test_metrics, setup, teardown),
    cmocka_unit_test_setup_teardown(test_api, setup, teardown),
    cmocka_unit_test(test_web_start),
    cmocka_unit_test(test_parse_head),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
