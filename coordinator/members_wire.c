/*
 * members_wire.c: the population's messages (docs/population.md): a member's checkpoint
 * served for its copy order.
 */
#include "commands.h"
#include "coord.h"
#include "wire/wire.h"

void xqc_cmd_checkpoint_request(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Envelope *env) {
  (void)env;
  if (c->cfg.population <= 0) {
    xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_NOT_FOUND,
                    "this campaign has no population (campaign.ini population = 0)");
    return;
  }
  xqc_reply_error(c, p->rid, p->rid_len, rq, XQ_ERROR_NOT_FOUND, "no checkpoint");
}
