/*
 * population_view.h: a population as text (issue 48), for `xqz status` (one line) and
 * `xqz population` (the members table and the last events). Slots are 1-based as the
 * Status carries them; Elo is relative to the best net (at 0).
 */
#ifndef XQZ_POPULATION_VIEW_H
#define XQZ_POPULATION_VIEW_H

#include <stdio.h>

#include "xqz.pb-c.h"

/* The newest events `xqz population` prints under the table. */
#define XQZ_POPULATION_EVENTS 10

/* "4 members (3 alive), round 3, share 10%: best member 2 (+35 [-10, +80])", or "...: no
 * member rated yet"; a round under way adds "; round games 12 of 48". No newline. */
void xqz_population_line(FILE *f, const Xqz__Population *p);
/* The members table: member, host, alive, step, the four settings, rating and interval,
 * generation, parent, net; a control member is marked. */
void xqz_population_table(FILE *f, const Xqz__Population *p);
/* The newest max events, oldest first, one line each: round, member <- donor, the
 * generation, both ratings and the settings that changed. */
void xqz_population_events(FILE *f, const Xqz__Population *p, size_t max);

#endif
