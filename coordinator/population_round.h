/*
 * population_round.h: the population's rounds (docs/population.md, DESIGN step 8): when
 * the members' candidates open a round robin that rates them, and what a decided round
 * orders. Top floor: takes the coordinator's state (coord.h). population_round.c defines
 * it; members_wire.c calls it.
 */
#ifndef XQC_POPULATION_ROUND_H
#define XQC_POPULATION_ROUND_H

typedef struct xqc_s xqc_t; /* coord.h */

/* A member's candidate was stored (its net, its checkpoint, members.txt): slot (0-based)
 * has a new last net, which may open a round. */
void xqc_round_candidate(xqc_t *c, int slot);

#endif
