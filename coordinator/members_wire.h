/*
 * members_wire.h: the population's side of the coordinator's messages (DESIGN steps 2, 4,
 * 6, 7; docs/population.md): the members' table opened at start (members.txt), a
 * trainer's Hello claiming a slot, a member's BatchRequest checked and held back while its
 * copy order is pending, a member's candidate checkpoint stored, and CheckpointRequest.
 * Slots are 0-based here and 1-based on the wire. A member is known by its CURVE key with
 * CURVE, else by its connection (routing id) and host. Every function but
 * xqc_members_open is for a coordinator whose cfg.population > 0.
 * Top floor: the functions take the coordinator's state (coord.h).
 */
#ifndef XQC_MEMBERS_WIRE_H
#define XQC_MEMBERS_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "peers/peers.h"
#include "support/error.h"
#include "xqz.pb-c.h"

typedef struct xqc_s xqc_t; /* coord.h */

/* At start, after the campaign is open: with population > 0, loads <campaign>/members.txt,
 * or makes a new table (the campaign's id, its net architecture, batch_size) and saves it.
 * Refuses (XQ_EMISMATCH, the fix named in eb) a saved table of another size, architecture
 * or campaign; a damaged one is refused with members.h's reasons. 0 with population 0. */
int xqc_members_open(xqc_t *c, xq_errbuf_t *eb);

/* Saves the members' table (members.txt); a failure is logged, and the table goes on. */
void xqc_members_persist(xqc_t *c);

/* From the timer: frees the slots of holders silent longer than worker_timeout_ms. */
void xqc_members_tick(xqc_t *c, uint64_t now_ms);

/* A trainer's Hello h in a population: claims its slot (members.h). On success fills m and
 * its settings s (Welcome.member) and returns the slot; else answers the Hello with an
 * Error naming the refusal (a forged claim counted as a fault) and returns -1. */
int xqc_members_hello(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__Hello *h,
                      Xqz__Member *m, Xqz__MemberSettings *s);

/* Fills m and its settings s (m->settings = s) with what slot's member is told. */
void xqc_members_fill(xqc_t *c, int slot, Xqz__Member *m, Xqz__MemberSettings *s);

/* A BatchRequest r in a population: returns the slot to serve, after checking that p holds
 * r's member_slot, noting the trainer's step and its carried-out copy order; -1 when r was
 * answered already: refused (an Error; a slot another connection holds is a fault), or a
 * Wait carrying the Member while its copy order is pending. */
int xqc_members_batch(xqc_t *c, xqc_peer_t *p, uint64_t rq, const Xqz__BatchRequest *r);

/* Answers request rq of slot's member with a Wait of ms (why says what is awaited)
 * carrying its Member. */
void xqc_members_wait(xqc_t *c, xqc_peer_t *p, uint64_t rq, int slot, uint32_t ms,
                      const char *why);

/* A CandidateNet cn of net id net in a population, before the net is stored: checks that
 * p holds cn's member_slot and that the checkpoint is there, matches its CRC and holds net,
 * and stores it at <campaign>/checkpoints/<net>.xqzc. Returns the slot; XQ_EINVAL when
 * refused (counted as a fault; the reason in why, for the Ack); XQ_EIO when it cannot be
 * stored now (the reason in why; the trainer resends). */
int xqc_members_candidate_check(xqc_t *c, xqc_peer_t *p, const Xqz__CandidateNet *cn,
                                uint64_t net, char *why, size_t n);
/* The candidate net of slot's member at step is stored: the member's last net, members.txt
 * saved, its previous checkpoint deleted when no pending copy needs it, and the round
 * told (population_round.h). No gating match is opened. */
void xqc_members_candidate_stored(xqc_t *c, int slot, uint64_t net, int64_t step);

#endif
