/* enrol.c: the worker's one-time enrolment (see enrol.h). */
#include "enrol.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "support/log.h"
#include "wire/client.h"
#include "wire/messages.h"
#include "wire/wire.h"

int xq_worker_enrol(const char *coordinator, const xq_curve_t *curve, const char *token,
                    int timeout_ms, xq_errbuf_t *eb) {
  if (!curve || !curve->on)
    return xq_err_set(eb, XQ_EINVAL, "--enrol needs CURVE: give --server-key (the"
                      " coordinator's .pub) and --key (this worker's .secret from xqz keygen)");
  xq_client_t cl;
  int rc = xq_client_open(&cl, coordinator, curve, eb);
  if (rc < 0) return rc;
  char host[256] = "";
  gethostname(host, sizeof host - 1);
  Xqz__Envelope env, *reply = NULL;
  Xqz__EnrolRequest rq;
  xq_msg_enrol_request(&env, &rq, token, host);
  rc = xq_client_call(&cl, &env, timeout_ms, &reply, eb);
  xq_client_close(&cl);
  if (rc < 0) {
    char was[sizeof eb->msg];
    snprintf(was, sizeof was, "%s", eb->msg);
    return xq_err_set(eb, XQ_EIO, "enrolment: %s (the coordinator lets an unknown key in only"
                      " while a token is open: has it expired?)", was);
  }
  if (reply->body_case == XQZ__ENVELOPE__BODY_ERROR) {
    rc = xq_err_set(eb, XQ_EINVAL, "enrolment refused: %s",
                    reply->error->message ? reply->error->message : "error");
  } else if (reply->body_case != XQZ__ENVELOPE__BODY_ENROL_RESULT) {
    rc = xq_err_set(eb, XQ_EINVAL, "enrolment: the coordinator answered with another message");
  } else if (!reply->enrol_result->ok) {
    rc = xq_err_set(eb, XQ_EINVAL, "enrolment refused: %s",
                    reply->enrol_result->message ? reply->enrol_result->message : "refused");
  } else {
    XQ_LOGI("worker", "enrolment: %s", reply->enrol_result->message ?
            reply->enrol_result->message : "ok");
    rc = 0;
  }
  xq_wire_free(&reply);
  return rc;
}
