/* remote.c: connection options, one checked request, match rows (see remote.h). */
#include "remote.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "support/ini_value.h"
#include "wire/curve.h"
#include "wire/endpoint.h"
#include "wire/wire.h"

void xqz_remote_init(xqz_remote_t *r, const char *cmd) {
  memset(r, 0, sizeof *r);
  r->cmd = cmd;
}

int xqz_remote_check_addr(const char *name, const char *v, xq_errbuf_t *eb) {
  char what[32];
  snprintf(what, sizeof what, "--%s", name);
  return xq_endpoint_check(v, what, eb);
}

/* The router address in DIR/campaign.ini, as a client connects to it: a bind to every
 * interface (host "*" or 0.0.0.0) is reached on loopback. */
static int campaign_address(xqz_remote_t *r, xq_errbuf_t *eb) {
  char ini[1100], bind[256];
  struct stat st;
  if (stat(r->campaign, &st) != 0 || !S_ISDIR(st.st_mode))
    return xq_err_set(eb, XQ_EINVAL, "%s: no such campaign directory (check the path; or give"
                      " --coordinator ADDR)", r->campaign);
  snprintf(ini, sizeof ini, "%s/campaign.ini", r->campaign);
  xq_errbuf_t e2;
  int rc = xq_ini_get(ini, "router", bind, sizeof bind, &e2);
  if (rc < 0) /* e2 names the file already */
    return xq_err_set(eb, XQ_EINVAL, "%s (is it a campaign directory? its coordinator writes"
                      " campaign.ini at its first start)", e2.msg);
  if (rc == 0) snprintf(bind, sizeof bind, "%s", XQZ_REMOTE_DEFAULT_ADDR);
  const char *host = strstr(bind, "://");
  host = host ? host + 3 : bind;
  const char *wild[] = {"*:", "0.0.0.0:"};
  for (int i = 0; i < 2; i++)
    if (!strncmp(host, wild[i], strlen(wild[i]))) {
      snprintf(r->campaign_addr, sizeof r->campaign_addr, "%.*s127.0.0.1:%s",
               (int)(host - bind), bind, host + strlen(wild[i]));
      break;
    }
  if (!r->campaign_addr[0]) snprintf(r->campaign_addr, sizeof r->campaign_addr, "%s", bind);
  r->addr = r->campaign_addr;
  return xq_endpoint_check(r->addr, "the router in campaign.ini", eb);
}

int xqz_remote_open(xqz_remote_t *r) {
  xq_curve_t curve;
  xq_errbuf_t eb;
  if (!r->addr && r->campaign && campaign_address(r, &eb) < 0) {
    fprintf(stderr, "xqz %s: %s\n", r->cmd, eb.msg);
    return 1;
  }
  if (!r->addr) r->addr = XQZ_REMOTE_DEFAULT_ADDR;
  if (xq_curve_client_load(&curve, r->server_key, r->key, &eb) < 0 ||
      xq_client_open(&r->cl, r->addr, &curve, &eb) < 0) {
    fprintf(stderr, "xqz %s: %s\n", r->cmd, eb.msg);
    xq_client_close(&r->cl);
    return 1;
  }
  return 0;
}

void xqz_remote_close(xqz_remote_t *r) { xq_client_close(&r->cl); }

Xqz__Envelope *xqz_remote_call(xqz_remote_t *r, Xqz__Envelope *env,
                               Xqz__Envelope__BodyCase want) {
  Xqz__Envelope *reply = NULL;
  xq_errbuf_t eb;
  int rc = xq_client_call(&r->cl, env, r->timeout_ms, &reply, &eb);
  if (rc == XQ_EVERSION) {
    r->version_mismatch = true;
    fprintf(stderr, "xqz %s: the coordinator speaks another protocol version; upgrade xqz or"
            " the coordinator (this is %s): %s\n", r->cmd, XQ_VERSION_LINE, eb.msg);
    return NULL;
  }
  if (rc < 0) {
    fprintf(stderr, "xqz %s: %s\n", r->cmd, eb.msg);
    return NULL;
  }
  if (reply->body_case == want) return reply;
  r->version_mismatch = xq_wire_is_version_refusal(reply);
  if (r->version_mismatch)
    fprintf(stderr, "xqz %s: the coordinator refused this protocol version; upgrade xqz or"
            " the coordinator (this is %s): %s\n", r->cmd, XQ_VERSION_LINE,
            reply->error->message);
  else if (reply->body_case == XQZ__ENVELOPE__BODY_ERROR)
    fprintf(stderr, "xqz %s: the coordinator answered with an error (code %u): %s\n", r->cmd,
            reply->error->code, reply->error->message);
  else
    fprintf(stderr, "xqz %s: unexpected answer from the coordinator (message type %d)\n",
            r->cmd, (int)reply->body_case);
  xq_wire_free(&reply);
  return NULL;
}

void xqz_match_header(FILE *f) {
  fprintf(f, "  %-16s  %-16s  %6s  %-11s  %5s  %-18s  %-8s  %-16s\n", "net", "parent", "step",
          "W-D-L", "score", "Elo (95%)", "decision", "time");
}

const char *xqz_elo_text(char *buf, size_t cap, double elo, int decimals) {
  if (isnan(elo)) snprintf(buf, cap, "-");
  else if (isinf(elo)) snprintf(buf, cap, "%s", elo > 0 ? "+inf" : "-inf");
  else if (fabs(elo) < 0.5 * pow(10.0, -decimals)) snprintf(buf, cap, "%.*f", decimals, 0.0);
  else snprintf(buf, cap, "%+.*f", decimals, elo);
  return buf;
}

const char *xqz_match_elo_text(char *buf, size_t cap, const Xqz__MatchStatus *m) {
  char e[32], lo[32], hi[32];
  xqz_elo_text(e, sizeof e, m->elo, 0);
  double ci = (m->elo_hi - m->elo_lo) / 2;
  if (m->wins + m->losses == 0 && m->draws == 0) snprintf(buf, cap, "- (no games)");
  else if (m->wins + m->losses == 0) snprintf(buf, cap, "%s (draws only)", e);
  else if (isfinite(ci))
    snprintf(buf, cap, "%s ± %.0f", e, ci);
  else if (isfinite(m->elo_lo) || isfinite(m->elo_hi))
    snprintf(buf, cap, "%s [%s, %s]", e, xqz_elo_text(lo, sizeof lo, m->elo_lo, 0),
             xqz_elo_text(hi, sizeof hi, m->elo_hi, 0));
  else snprintf(buf, cap, "%s (interval open)", e);
  return buf;
}

void xqz_match_row(FILE *f, const Xqz__MatchStatus *m) {
  char wdl[40], elo[64], when[32] = "-";
  snprintf(wdl, sizeof wdl, "%lld-%lld-%lld", (long long)m->wins, (long long)m->draws,
           (long long)m->losses);
  xqz_match_elo_text(elo, sizeof elo, m);
  if (m->time > 0) {
    time_t t = (time_t)m->time;
    struct tm tm;
    localtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
  }
  fprintf(f, "  %016llx  %016llx  %6lld  %-11s  %5.3f  %-19s  %-8s  %-16s\n",
          (unsigned long long)m->net_a, (unsigned long long)m->net_b, (long long)m->step, wdl,
          m->score, elo, m->decision, when);
}

/* The anchors named in a, in order of first appearance (at most max). */
static size_t anchor_names(Xqz__AnchorPoint *const *a, size_t n, const char **names,
                           size_t max) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++) {
    size_t j = 0;
    while (j < k && strcmp(names[j], a[i]->anchor)) j++;
    if (j == k && k < max) names[k++] = a[i]->anchor;
  }
  return k;
}

void xqz_anchor_line(FILE *f, Xqz__AnchorPoint *const *a, size_t n) {
  const char *names[8];
  size_t k = anchor_names(a, n, names, 8);
  if (!k) {
    fprintf(f, "none measured yet");
    return;
  }
  for (size_t j = 0; j < k; j++) {
    const Xqz__AnchorPoint *last = NULL;
    for (size_t i = 0; i < n; i++)
      if (!strcmp(a[i]->anchor, names[j])) last = a[i];
    fprintf(f, "%s%.0f%% vs %s (%lld games, net %016llx, promotion %lld)", j ? ", " : "",
            100.0 * last->score, last->anchor, (long long)last->games,
            (unsigned long long)last->net_id, (long long)last->promotion);
  }
}

void xqz_anchor_table(FILE *f, Xqz__AnchorPoint *const *a, size_t n) {
  const char *names[8];
  size_t k = anchor_names(a, n, names, 8);
  if (!k) return;
  fprintf(f, "  %-9s  %-16s  %6s", "promotion", "net", "step");
  for (size_t j = 0; j < k; j++) fprintf(f, "  %-16s", names[j]);
  fprintf(f, "\n");
  for (size_t i = 0; i < n; i++) {
    bool seen = false; /* one row per net, at its first result */
    for (size_t p = 0; p < i && !seen; p++) seen = a[p]->net_id == a[i]->net_id;
    if (seen) continue;
    fprintf(f, "  %-9lld  %016llx  %6lld", (long long)a[i]->promotion,
            (unsigned long long)a[i]->net_id, (long long)a[i]->step);
    for (size_t j = 0; j < k; j++) {
      char cell[40] = "-";
      for (size_t q = i; q < n; q++)
        if (a[q]->net_id == a[i]->net_id && !strcmp(a[q]->anchor, names[j]))
          snprintf(cell, sizeof cell, "%3.0f%% %lld-%lld-%lld", 100.0 * a[q]->score,
                   (long long)a[q]->wins, (long long)a[q]->draws, (long long)a[q]->losses);
      fprintf(f, "  %-16s", cell);
    }
    fprintf(f, "\n");
  }
}
