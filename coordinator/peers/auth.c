/* auth.c: CURVE server options and the ZAP 1.0 handler (see auth.h; RFC 27/ZAP). */
#include "auth.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <zmq.h>

#include "clock.h"
#include "support/log.h"

#define COMP "auth"
#define ZAP_ENDPOINT "inproc://zeromq.zap.01"
#define ZAP_FRAMES_MAX 8
#define REFUSAL_LOG_MS 60000u

int xqc_auth_open(xqc_auth_t *a, const xqc_config_t *cfg, xq_errbuf_t *eb) {
  memset(a, 0, sizeof *a);
  if (!cfg->curve_secret_key[0]) {
    if (cfg->curve_allow_dir[0] || cfg->curve_admin_dir[0] || cfg->curve_trainer_dir[0])
      XQ_LOGW(COMP, "curve_allow_dir/curve_admin_dir/curve_trainer_dir are ignored:"
              " curve_secret_key is empty, so CURVE is off and anyone who reaches the ports"
              " may connect");
    return 0;
  }
  xq_errbuf_t e2;
  if (xq_curve_server_load(&a->curve, cfg->curve_secret_key, &e2) < 0)
    return xq_err_set(eb, XQ_EINVAL, "curve_secret_key: %s", e2.msg);
  if (!cfg->curve_allow_dir[0])
    return xq_err_set(eb, XQ_EINVAL, "curve_secret_key is set but curve_allow_dir is empty:"
                      " set it to a directory holding the .pub files of the workers, the"
                      " trainer and the operators allowed to connect");
  int rc = xqc_keyset_open(&a->allow, cfg->curve_allow_dir, "curve_allow_dir", eb);
  if (rc < 0) return rc;
  if (cfg->curve_admin_dir[0]) {
    rc = xqc_keyset_open(&a->admin, cfg->curve_admin_dir, "curve_admin_dir", eb);
    if (rc < 0) return rc;
    a->admin_dir_set = true;
  } else {
    XQ_LOGW(COMP, "curve_admin_dir is empty: nobody may ban or unban (set it to a directory"
            " of operators' .pub files)");
  }
  if (cfg->curve_trainer_dir[0]) {
    rc = xqc_keyset_open(&a->trainer, cfg->curve_trainer_dir, "curve_trainer_dir", eb);
    if (rc < 0) return rc;
    a->trainer_dir_set = true;
  } else {
    XQ_LOGW(COMP, "curve_trainer_dir is empty: every key in curve_allow_dir may act as the"
            " trainer (take batches, send candidates); set it to a directory holding the"
            " trainer's .pub file");
  }
  a->on = true;
  XQ_LOGI(COMP, "CURVE on public_key=%s allowed_keys=%d admin_keys=%d trainer_keys=%d",
          a->curve.public_key, a->allow.n, a->admin.n, a->trainer.n);
  return 0;
}

int xqc_auth_bind(xqc_auth_t *a, void *zctx, xq_errbuf_t *eb) {
  if (!a->on) return 0;
  a->zap = zmq_socket(zctx, ZMQ_REP);
  int linger = 0;
  if (!a->zap || zmq_setsockopt(a->zap, ZMQ_LINGER, &linger, sizeof linger) ||
      zmq_bind(a->zap, ZAP_ENDPOINT))
    return xq_err_set(eb, XQ_EIO, "ZAP handler %s: %s", ZAP_ENDPOINT, zmq_strerror(zmq_errno()));
  return 0;
}

int xqc_auth_apply(xqc_auth_t *a, void *sock, xq_errbuf_t *eb) {
  if (!a->on) return 0;
  int rc = xq_curve_apply_server(sock, &a->curve, eb);
  if (rc == 0 && zmq_setsockopt(sock, ZMQ_ZAP_DOMAIN, "xqz", 3) != 0)
    rc = xq_err_set(eb, XQ_EIO, "ZMQ_ZAP_DOMAIN: %s", zmq_strerror(zmq_errno()));
  return rc;
}

/* true when this refusal of key should be logged (first time, or a minute since). */
static bool refusal_to_log(xqc_auth_t *a, const char *key, uint64_t now) {
  int oldest = 0;
  for (int i = 0; i < XQC_AUTH_REFUSAL_SLOTS; i++) {
    if (!strcmp(a->refusals[i].key, key)) {
      if (now - a->refusals[i].logged_ms < REFUSAL_LOG_MS) return false;
      a->refusals[i].logged_ms = now;
      return true;
    }
    if (a->refusals[i].logged_ms < a->refusals[oldest].logged_ms) oldest = i;
  }
  memcpy(a->refusals[oldest].key, key, sizeof a->refusals[oldest].key);
  a->refusals[oldest].logged_ms = now;
  return true;
}

static void frame_text(const zmq_msg_t *m, char *out, size_t cap) {
  size_t n = zmq_msg_size((zmq_msg_t *)m);
  if (n >= cap) n = cap - 1;
  memcpy(out, zmq_msg_data((zmq_msg_t *)m), n);
  out[n] = '\0';
  for (size_t i = 0; i < n; i++)
    if (out[i] < ' ' || out[i] > '~') out[i] = '?';
}

/* Decides one ZAP request (frames f[0..n)); fills status, text and user id. */
static void decide(xqc_auth_t *a, zmq_msg_t *f, int n, const char **status, const char **text,
                   char user[XQ_Z85_KEY_LEN + 1]) {
  char version[8], mech[16], address[64];
  user[0] = '\0';
  *status = "400";
  if (n < 6) {
    *text = "malformed ZAP request";
    return;
  }
  frame_text(&f[0], version, sizeof version);
  frame_text(&f[5], mech, sizeof mech);
  frame_text(&f[3], address, sizeof address);
  if (strcmp(version, "1.0")) {
    *text = "unsupported ZAP version";
    return;
  }
  if (strcmp(mech, "CURVE") || n != 7 || zmq_msg_size(&f[6]) != 32) {
    *text = "CURVE required";
    XQ_LOGW(COMP, "connection refused: not CURVE mechanism=%s address=%s", mech, address);
    return;
  }
  char key[XQ_Z85_KEY_LEN + 1];
  if (!zmq_z85_encode(key, zmq_msg_data(&f[6]), 32)) {
    *text = "bad key";
    return;
  }
  const char *name = xqc_keyset_find(&a->allow, key);
  if (!name && (int64_t)time(NULL) < a->enrol_until_s) {
    /* Enrolment open: in, but it may send EnrolRequest only (peers.c, roles.h). */
    if (refusal_to_log(a, key, xqc_now_ms()))
      XQ_LOGI(COMP, "connection let in to enrol only: key not in curve_allow_dir, an"
              " enrolment token is open (logged once a minute per key) key=%s address=%s",
              key, address);
    name = "(enrolling)";
  } else if (!name) {
    *text = "key not allowed";
    a->refused++;
    if (refusal_to_log(a, key, xqc_now_ms()))
      XQ_LOGW(COMP, "connection refused: key not in curve_allow_dir (add its .pub file there"
              " to allow it; logged once a minute per key) key=%s address=%s dir=%s", key,
              address, a->allow.dir);
    return;
  }
  a->allowed++;
  XQ_LOGD(COMP, "connection allowed key=%s name=%s address=%s", key, name, address);
  *status = "200";
  *text = "OK";
  memcpy(user, key, XQ_Z85_KEY_LEN + 1);
}

/* Reads one request (all its frames) and answers it; false when there was none. */
static bool serve_one(xqc_auth_t *a) {
  zmq_msg_t f[ZAP_FRAMES_MAX], extra;
  int n = 0, more = 1;
  while (more) {
    zmq_msg_t *m = n < ZAP_FRAMES_MAX ? &f[n] : &extra; /* frames past the 8th: dropped */
    zmq_msg_init(m);
    if (zmq_msg_recv(m, a->zap, n ? 0 : ZMQ_DONTWAIT) < 0) {
      zmq_msg_close(m);
      if (n == 0) return false;
      break;
    }
    more = zmq_msg_more(m);
    if (m == &extra) zmq_msg_close(m);
    else n++;
  }
  const char *status, *text;
  char user[XQ_Z85_KEY_LEN + 1];
  decide(a, f, n, &status, &text, user);
  /* Reply: version, request id, status code, status text, user id, metadata. */
  char request_id[256] = "";
  size_t rid_len = 0;
  if (n > 1) {
    rid_len = zmq_msg_size(&f[1]);
    if (rid_len > sizeof request_id) rid_len = sizeof request_id;
    memcpy(request_id, zmq_msg_data(&f[1]), rid_len);
  }
  for (int i = 0; i < n; i++) zmq_msg_close(&f[i]);
  const struct {
    const void *p;
    size_t n;
  } reply[] = {{"1.0", 3}, {request_id, rid_len}, {status, 3},
               {text, strlen(text)}, {user, strlen(user)}, {"", 0}};
  const int nreply = (int)(sizeof reply / sizeof reply[0]);
  for (int i = 0; i < nreply; i++) {
    if (zmq_send(a->zap, reply[i].p, reply[i].n, i + 1 < nreply ? ZMQ_SNDMORE : 0) < 0) {
      /* libzmq drops a partial reply when the REP socket is closed; the peer's handshake
       * times out and it connects again, so this costs one handshake, not the handler. */
      XQ_LOGW(COMP, "ZAP reply not sent: zmq_send of frame %d: %s (the peer's handshake"
              " times out and it reconnects)", i + 1, zmq_strerror(zmq_errno()));
      return false;
    }
  }
  return true;
}

void xqc_auth_drain(xqc_auth_t *a) {
  if (!a->zap) return;
  for (;;) {
    int ev = 0;
    size_t len = sizeof ev;
    if (zmq_getsockopt(a->zap, ZMQ_EVENTS, &ev, &len) != 0 || !(ev & ZMQ_POLLIN)) return;
    if (!serve_one(a)) return;
  }
}

static void on_zap(uv_poll_t *h, int status, int events) {
  (void)status;
  (void)events;
  xqc_auth_drain(h->data);
}

static void on_closed(uv_handle_t *h) { (void)h; }

int xqc_auth_watch(xqc_auth_t *a, uv_loop_t *loop) {
  if (!a->zap) return 0;
  int fd;
  size_t len = sizeof fd;
  if (zmq_getsockopt(a->zap, ZMQ_FD, &fd, &len) != 0) {
    XQ_LOGE(COMP, "cannot watch the ZAP handler: zmq_getsockopt(ZMQ_FD): %s (CURVE handshakes"
            " would go unanswered)", zmq_strerror(zmq_errno()));
    return XQ_EIO;
  }
  int rc = uv_poll_init(loop, &a->poll, fd);
  if (rc < 0) {
    XQ_LOGE(COMP, "cannot watch the ZAP handler: uv_poll_init(fd %d): %s (CURVE handshakes"
            " would go unanswered)", fd, uv_strerror(rc));
    return XQ_EIO;
  }
  a->poll.data = a;
  rc = uv_poll_start(&a->poll, UV_READABLE, on_zap);
  if (rc < 0) {
    XQ_LOGE(COMP, "cannot watch the ZAP handler: uv_poll_start(fd %d): %s (CURVE handshakes"
            " would go unanswered)", fd, uv_strerror(rc));
    uv_close((uv_handle_t *)&a->poll, on_closed); /* the loop's next turn finishes it */
    return XQ_EIO;
  }
  a->watching = true;
  xqc_auth_drain(a);
  return 0;
}

bool xqc_auth_is_admin(xqc_auth_t *a, const char *user_id) {
  return a->on && a->admin_dir_set && user_id && user_id[0] &&
         xqc_keyset_find(&a->admin, user_id);
}

bool xqc_auth_is_trainer(xqc_auth_t *a, const char *user_id) {
  if (!a->on || !user_id || !user_id[0]) return false;
  return a->trainer_dir_set ? xqc_keyset_find(&a->trainer, user_id) != NULL : true;
}

void xqc_auth_unwatch(xqc_auth_t *a) {
  if (!a->watching) return;
  uv_close((uv_handle_t *)&a->poll, on_closed);
  a->watching = false;
}

void xqc_auth_unbind(xqc_auth_t *a) {
  if (a->zap) zmq_close(a->zap);
  a->zap = NULL;
}

void xqc_auth_close(xqc_auth_t *a) {
  xqc_auth_unbind(a);
  xqc_keyset_close(&a->allow);
  xqc_keyset_close(&a->admin);
  xqc_keyset_close(&a->trainer);
  memset(&a->curve, 0, sizeof a->curve);
  a->on = false;
}
