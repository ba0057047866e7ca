/* start_net.c: fetch the coordinator's best net for a fresh start (see start_net.h). */
#include "start_net.h"

#include <stdio.h>

#include "support/log.h"
#include "wire/client.h"
#include "wire/messages.h"
#include "nn/netcache.h"
#include "wire/wire.h"

#define COMP "trainer"
#define CALL_TIMEOUT_MS 5000

/* One request. XQ_EIO: no answer (timeout, not connected); an Error reply becomes
 * XQ_EINVAL with the coordinator's message. */
static int call(xq_client_t *cl, Xqz__Envelope *req, Xqz__Envelope__BodyCase want,
                Xqz__Envelope **reply, xq_errbuf_t *eb) {
  int rc = xq_client_call(cl, req, CALL_TIMEOUT_MS, reply, eb);
  if (rc < 0) return rc;
  if ((*reply)->body_case == want) return 0;
  if ((*reply)->body_case == XQZ__ENVELOPE__BODY_ERROR)
    rc = xq_err_set(eb, XQ_EINVAL, "coordinator error: %s",
                    (*reply)->error->message ? (*reply)->error->message : "?");
  else
    rc = xq_err_set(eb, XQ_EFORMAT, "unexpected reply (body %d)", (int)(*reply)->body_case);
  xq_wire_free(reply);
  return rc;
}

static int best_id(xq_client_t *cl, uint64_t *id, xq_errbuf_t *eb) {
  Xqz__Envelope env, *r = NULL;
  Xqz__StatusRequest sr;
  xq_msg_status_request(&env, &sr);
  int rc = call(cl, &env, XQZ__ENVELOPE__BODY_STATUS, &r, eb);
  if (rc < 0) return rc;
  *id = r->status->best_net_id;
  xq_wire_free(&r);
  if (!*id) return xq_err_set(eb, XQ_EINVAL, "the coordinator has no net yet");
  return 0;
}

static int fetch(xq_client_t *cl, uint64_t id, const char *dir, xq_errbuf_t *eb) {
  xq_netfetch_t f;
  xq_netfetch_begin(&f, id);
  int rc = 0;
  while (rc == 0) {
    Xqz__Envelope env, *r = NULL;
    Xqz__NetRequest nr;
    xq_msg_net_request(&env, &nr, id, f.have, 0);
    rc = call(cl, &env, XQZ__ENVELOPE__BODY_NET_CHUNK, &r, eb);
    if (rc < 0) break;
    const Xqz__NetChunk *ch = r->net_chunk;
    rc = xq_netfetch_add(&f, dir, ch->net_id, ch->offset, ch->total, ch->file_crc32,
                         ch->data.data, ch->data.len, eb);
    xq_wire_free(&r);
  }
  xq_netfetch_close(&f);
  return rc < 0 ? rc : 0;
}

int trainer_fetch_best_net(const char *endpoint, const xq_curve_t *curve, const char *dir,
                           volatile sig_atomic_t *stop, char *path_out, size_t path_cap,
                           uint64_t *net_id, xq_errbuf_t *eb) {
  xq_client_t cl;
  int rc = xq_client_open(&cl, endpoint, curve, eb);
  while (rc == 0 && !*stop) {
    uint64_t id = 0;
    rc = best_id(&cl, &id, eb);
    if (rc == 0 && !xq_netcache_has(dir, id)) rc = fetch(&cl, id, dir, eb);
    if (rc == 0) {
      xq_netcache_path(dir, id, path_out, path_cap);
      *net_id = id;
      break;
    }
    /* A silent coordinator (not started yet, restarting) is waited for; an answer that
     * is an error or a broken net is not. */
    if (rc != XQ_EIO) break;
    XQ_LOGW(COMP, "waiting for the coordinator to fetch the best net endpoint=%s reason=\"%s\"",
            endpoint, eb->msg);
    rc = 0;
  }
  xq_client_close(&cl);
  if (rc == 0 && *stop) rc = xq_err_set(eb, XQ_EIO, "stopped while fetching the best net");
  return rc;
}
