/*
 * population_view.c: a population as text (population_view.h).
 */
#include "population_view.h"

#include <math.h>
#include <string.h>
#include <time.h>

#include "remote.h"

/* "+35 [-10, +80]", "unrated" before the member's first round. */
static const char *rating_text(char *buf, size_t n, const Xqz__MemberStatus *m) {
  char e[32], lo[32], hi[32];
  if (!m->rated) snprintf(buf, n, "unrated");
  else snprintf(buf, n, "%s [%s, %s]", xqz_elo_text(e, sizeof e, m->elo, 0),
                xqz_elo_text(lo, sizeof lo, m->elo_lo, 0),
                xqz_elo_text(hi, sizeof hi, m->elo_hi, 0));
  return buf;
}

/* The rated member with the highest Elo, NULL when none is rated. */
static const Xqz__MemberStatus *best_member(const Xqz__Population *p) {
  const Xqz__MemberStatus *b = NULL;
  for (size_t i = 0; i < p->n_members; i++)
    if (p->members[i]->rated && (!b || p->members[i]->elo > b->elo)) b = p->members[i];
  return b;
}

void xqz_population_line(FILE *f, const Xqz__Population *p) {
  size_t alive = 0;
  for (size_t i = 0; i < p->n_members; i++) alive += p->members[i]->alive;
  fprintf(f, "%u members (%zu alive), round %llu, share %.0f%%", p->size, alive,
          (unsigned long long)p->rounds, 100.0 * p->share);
  const Xqz__MemberStatus *b = best_member(p);
  char r[96];
  if (b) fprintf(f, ": best member %u (%s)", b->slot, rating_text(r, sizeof r, b));
  else fprintf(f, ": no member rated yet");
  if (p->round_games_max > 0)
    fprintf(f, "; round games %lld of %lld", (long long)p->round_games,
            (long long)p->round_games_max);
}

void xqz_population_table(FILE *f, const Xqz__Population *p) {
  fprintf(f, "  %-8s %-22s %-5s %9s %8s %9s %6s %5s  %-20s %3s %6s  %s\n", "member", "host",
          "alive", "step", "lr_scale", "l2", "value", "batch", "rating [95%]", "gen", "parent",
          "net");
  for (size_t i = 0; i < p->n_members; i++) {
    const Xqz__MemberStatus *m = p->members[i];
    const Xqz__MemberSettings *s = m->settings;
    char slot[16], parent[16] = "-", net[20] = "-", r[96];
    snprintf(slot, sizeof slot, "%u%s", m->slot, m->control ? " (ctl)" : "");
    if (m->parent) snprintf(parent, sizeof parent, "%u", m->parent);
    if (m->net_id) snprintf(net, sizeof net, "%016llx", (unsigned long long)m->net_id);
    fprintf(f, "  %-8s %-22.22s %-5s %9llu %8.4g %9.3g %6.3g %5u  %-20s %3u %6s  %s\n", slot,
            m->host && m->host[0] ? m->host : "-", m->alive ? "yes" : "no",
            (unsigned long long)m->step, s ? s->lr_scale : NAN, s ? s->l2 : NAN,
            s ? s->value_weight : NAN, s ? s->batch : 0, rating_text(r, sizeof r, m),
            m->generation, parent, net);
  }
  fprintf(f, "  (rating: Elo against the best net, at 0, in the member's last round; gen: times\n"
             "   the member was replaced by a copy; parent: the member it last copied)\n");
}

/* " lr_scale 1 -> 1.2" for each setting that changed ("settings unchanged" when none). */
static void changes(FILE *f, const Xqz__MemberSettings *a, const Xqz__MemberSettings *b) {
  if (!a || !b) return;
  const char *names[4] = {"lr_scale", "l2", "value_weight", "batch"};
  double va[4] = {a->lr_scale, a->l2, a->value_weight, a->batch};
  double vb[4] = {b->lr_scale, b->l2, b->value_weight, b->batch};
  int n = 0;
  for (int i = 0; i < 4; i++)
    if (va[i] != vb[i]) fprintf(f, "%s %s %.4g -> %.4g", n++ ? "," : "", names[i], va[i], vb[i]);
  if (!n) fprintf(f, " settings unchanged");
}

void xqz_population_events(FILE *f, const Xqz__Population *p, size_t max) {
  size_t first = p->n_events > max ? p->n_events - max : 0;
  fprintf(f, "last exploit-and-explore steps (%zu of %zu)\n", p->n_events - first, p->n_events);
  for (size_t i = first; i < p->n_events; i++) {
    const Xqz__PbtEvent *e = p->events[i];
    char when[32] = "-", me[32], de[32];
    if (e->time > 0) {
      time_t t = (time_t)e->time;
      struct tm tm;
      localtime_r(&t, &tm);
      strftime(when, sizeof when, "%Y-%m-%d %H:%M", &tm);
    }
    fprintf(f, "  %s  round %llu: member %u <- %u (generation %u; Elo %s, donor %s):", when,
            (unsigned long long)e->round, e->member, e->donor, e->generation,
            xqz_elo_text(me, sizeof me, e->member_elo, 0),
            xqz_elo_text(de, sizeof de, e->donor_elo, 0));
    changes(f, e->before, e->after);
    fprintf(f, "\n");
  }
}
