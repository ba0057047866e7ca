/*
 * status.h: the coordinator's state as one Status message (proto/xqz.proto). It is the
 * single source of every view: the StatusRequest reply (`xqz status`), the HTTP
 * endpoints (/api/status, /metrics, the dashboard) and the periodic status log line.
 * Also the other watched quantities that feed it: the ingest rate samples, the trainer's
 * loss reports, and the gating match list (PromotionsRequest, /api/promotions).
 *
 * Ownership: xqc_status_build allocates the whole message tree; free it with
 * xqc_status_free. Likewise xqc_promotions_build / xqc_promotions_free.
 */
#ifndef XQC_STATUS_H
#define XQC_STATUS_H

#include "coord.h"

#define XQC_RECENT_MATCHES 20    /* Status.recent_matches */
#define XQC_LOSS_POINTS 200      /* Status.loss_history */
#define XQC_PROMOTIONS_MAX 1000  /* matches in one Promotions reply (ask again for more) */

int xqc_status_build(xqc_t *c, Xqz__Status **out);
void xqc_status_free(Xqz__Status **s);

/* Decided matches with id > after_match_id, oldest first (at most XQC_PROMOTIONS_MAX). */
int xqc_promotions_build(xqc_t *c, uint64_t after_match_id, Xqz__Promotions **out);
void xqc_promotions_free(Xqz__Promotions **p);

/* Called by the timer: records (now, positions) about once a second. */
void xqc_status_rate_sample(xqc_t *c, uint64_t now_ms);
/* Positions ingested per second over the last minute (0 before two samples). */
double xqc_status_rate(const xqc_t *c);
/* A trainer's loss report (BatchRequest.loss_*): kept as the last loss, stored in the
 * losses table at most once per XQC_LOSS_EVERY_STEPS steps and XQC_LOSS_EVERY_S. */
#define XQC_LOSS_EVERY_STEPS 20
#define XQC_LOSS_EVERY_S 10
void xqc_status_loss_report(xqc_t *c, const Xqz__BatchRequest *r);
/* A trainer's BatchRequest and how it was answered (balance.h). */
void xqc_status_batch_answered(xqc_t *c, const xqc_peer_t *p, xqc_batch_answer_t answer);
/* Called by the timer: the balance's counters and state (balance.h). */
/* The self_balance settings of the campaign (self_balance.h). */
xqc_self_balance_cfg_t xqc_status_self_balance_cfg(const xqc_t *c);
void xqc_status_balance_tick(xqc_t *c, uint64_t now_ms);
/* Loads the last loss point and the trainer's step at start (campaign.db). */
void xqc_status_open(xqc_t *c);
/* Stores the campaign's counters (the throughput table) when XQC_THROUGHPUT_EVERY_S have
 * passed since the last row, or now when force (a start, a stop). */
#define XQC_THROUGHPUT_EVERY_S 30
#define XQC_THROUGHPUT_POINTS 200 /* Status.throughput_history */
void xqc_status_throughput_tick(xqc_t *c, bool force);

#endif
