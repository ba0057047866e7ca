/*
 * members.h: the coordinator's table of population members (issue 48). A population of K
 * trainers trains K nets side by side; each trainer holds one of K slots, and the slot
 * keeps what the population knows of that member: its training settings, how many times
 * it was replaced by a copy (its generation), whom it last copied, its last step and its
 * last candidate net. Pure: the caller passes the time, the peer's identity and the
 * campaign's; no I/O except the save and load at the bottom.
 *
 * Who holds a slot follows the worker ids' rules (peer_table.c, window/sources.c): with
 * CURVE a slot is bound to the trainer's key, and the same key gets its slot back after a
 * reconnection; without CURVE a slot is bound to the connection while it is alive, and a
 * new connection from the same host takes it over (the trainer reconnecting). A slot whose
 * holder was silent longer than the timeout is free again; it remembers its last key, so
 * that key gets it back first, but a trainer that asks for any slot may get it when no
 * other is free. Asking for a slot by number is a claim of ownership: it is refused (a
 * forged claim) when another key owns the slot or another live connection holds it.
 */
#ifndef XQC_MEMBERS_H
#define XQC_MEMBERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "population/pbt.h"
#include "support/error.h"

#define XQC_MEMBERS_MAX 16      /* the population setting's cap (config.h) */
#define XQC_MEMBER_KEY_MAX 41   /* a Z85 CURVE public key and its NUL */
#define XQC_MEMBER_TEXT_MAX 64  /* connection identity, host, architecture */

/* The member settings, in the order of xqc_members_ranges() and of every settings[]. */
enum {
  XQC_MS_LR_SCALE,     /* factor on the trainer's learning-rate schedule */
  XQC_MS_L2,           /* L2 coefficient (the trainer's --l2) */
  XQC_MS_VALUE_WEIGHT, /* weight of the value loss against the policy loss */
  XQC_MS_BATCH,        /* batch size (positions) */
  XQC_MS_COUNT
};
_Static_assert(XQC_MS_COUNT <= XQC_PBT_MAX_SETTINGS, "pbt.h holds every member setting");

typedef struct {
  bool held;        /* a live trainer holds it */
  bool used;        /* it has had a holder since the table was made */
  char key[XQC_MEMBER_KEY_MAX];   /* the CURVE key it is bound to; "" without CURVE */
  char conn[XQC_MEMBER_TEXT_MAX]; /* the holder's connection identity (routing id as text) */
  char host[XQC_MEMBER_TEXT_MAX]; /* the holder's address, for reconnections and operators */
  uint64_t last_seen_ms;          /* the holder's last message */
  double settings[XQC_PBT_MAX_SETTINGS]; /* XQC_MS_COUNT used */
  int generation;   /* times this slot was replaced by a copy of another member */
  int parent;       /* the slot it last copied, -1 = none */
  int64_t last_step;   /* the trainer's last reported step */
  uint64_t last_net;   /* its last candidate net id, 0 = none */
  /* Its last copy order (xqc_members_apply): the order's number (0 = none yet) and the
   * donor's net whose checkpoint the member continues from. A member has carried it out
   * when it reports the number back (BatchRequest.member_order). */
  uint64_t order, copy_net;
  /* Its rating in the last round (the best net at 0), with the 95% interval. */
  bool rated;
  double elo, elo_lo, elo_hi;
  uint64_t served; /* samples served to it since this start (pacing; not saved) */
  /* Its step when the last round opened or when it last carried out a copy (Ray Tune's
   * last perturbation): the next round waits until it has trained pbt_interval_steps
   * beyond it (population_round.h). Not saved: after a restart it is the member's step. */
  int64_t round_step;
  /* The last copy order its trainer reported carried out (BatchRequest.member_order) since
   * this start; not saved: after a restart the trainer's next BatchRequest says it again. */
  uint64_t done_order;
  /* The size and CRC-32 of copy_net's checkpoint file, read once for the Member messages
   * (members_wire.c); valid while copy_known == copy_net (0: not read yet). Not saved. */
  uint64_t copy_known, copy_size;
  uint32_t copy_crc32;
} xqc_member_t;

typedef struct {
  int k;            /* slots in use: the population setting, 2..XQC_MEMBERS_MAX */
  int control;      /* the control slot (default settings, never copies): 0, or -1 = none */
  uint64_t campaign_id;
  char arch[XQC_MEMBER_TEXT_MAX]; /* the campaign's net architecture (net_size spelling) */
  uint64_t round;      /* rounds decided (exploit and explore carried out) so far */
  uint64_t last_order; /* the number of the newest copy order (orders count from 1) */
  xqc_member_t slot[XQC_MEMBERS_MAX];
} xqc_members_t;

/* A trainer's request for a slot (a Hello, or whatever message the wiring uses). */
typedef struct {
  unsigned roles;       /* the peer's roles (peers/roles.h); must include XQC_ROLE_TRAINER */
  const char *key;      /* its CURVE key, "" without CURVE */
  const char *conn;     /* its connection identity, never "" */
  const char *host;     /* its address, "" if unknown */
  uint64_t campaign_id; /* the campaign it believes in; 0 = does not know yet */
  const char *arch;     /* its net's architecture */
  int want;             /* the slot it held before, -1 = any */
} xqc_member_ask_t;

/* The settings' names and ranges (XQC_MS_COUNT rows), for pbt.h's round and explore. */
const xqc_pbt_range_t *xqc_members_ranges(void);
/* The default settings (the control member's): lr_scale 1, l2 1e-4, value_weight 1, and
 * batch, the campaign's batch_size. */
void xqc_members_defaults(double *settings, double batch);

/* Makes an empty table of k slots (2..XQC_MEMBERS_MAX), each with the default settings,
 * generation 0 and no parent; control: slot 0 is the control member. */
void xqc_members_init(xqc_members_t *t, int k, bool control, uint64_t campaign_id,
                      const char *arch, double batch);

/* Frees every held slot whose holder was silent longer than timeout_ms at now_ms. Returns
 * how many were freed. */
int xqc_members_expire(xqc_members_t *t, uint64_t now_ms, uint64_t timeout_ms);

/* Gives the asking trainer a slot in *slot: its own (bound to its key, or held by its
 * connection or, without CURVE, by a connection from its host), else the asked one, else a
 * free slot (one never held first). Without CURVE, a claim by number takes a live slot over
 * only from the holder's own host; a claim of any slot never takes a live one (several
 * trainers may run on one host). Expires silent holders first. Returns 0, or with the
 * reason in why: XQ_EINVAL (not a trainer; the slot number out of range), XQ_EMISMATCH
 * (another campaign or another architecture: both named; a forged claim), XQ_EBUSY
 * (every slot held by a live trainer). */
int xqc_members_claim(xqc_members_t *t, const xqc_member_ask_t *a, uint64_t now_ms,
                      uint64_t timeout_ms, int *slot, char *why, size_t n);

/* The slot's holder was heard from: a message at now_ms, with its trainer step (0: not
 * said, leaves it; it may go down: a trainer resumed from an older checkpoint, or one that
 * copied a member behind it) and last candidate net (0: none yet, leaves it). */
void xqc_members_seen(xqc_members_t *t, int slot, uint64_t now_ms, int64_t step,
                      uint64_t net_id);

/* The slot held by connection conn, or -1. */
int xqc_members_find_conn(const xqc_members_t *t, const char *conn);

/* Whether the slot's copy order is still to be carried out: it has one (order > 0) with a
 * net to copy (copy_net 0: withdrawn, members_wire.c) that its trainer has not reported
 * done since this start. */
bool xqc_members_copy_pending(const xqc_members_t *t, int slot);

/* Whether the checkpoint of net id net is still needed: it is some slot's last net, or the
 * copy_net of a slot whose copy is pending. A checkpoint no longer needed may be deleted. */
bool xqc_members_checkpoint_needed(const xqc_members_t *t, uint64_t net);

/* Carries out the table's side of a pbt.h copy order: the member takes the order's
 * settings (the donor's, perturbed), its generation goes up by one, its parent is the
 * donor, and it gets the order's number (last_order + 1) and the donor's last net as the
 * net to copy; the member's trainer copies the weights (trainer/member.h). XQ_EINVAL
 * (reason in why) when the order names a slot out of range, the control member, the
 * member as its own donor, or a donor with no net yet. */
int xqc_members_apply(xqc_members_t *t, const xqc_pbt_order_t *o, char *why, size_t n);

/* Writes the table to path as text (a line per slot, magic, version and a CRC-32 line at
 * the end), atomically; the holders are not saved: after a restart every slot is free and
 * keeps its key. 0 or XQ_EIO (reason in eb). */
int xqc_members_save(const xqc_members_t *t, const char *path, xq_errbuf_t *eb);
/* Reads a table saved by xqc_members_save into t. A missing file is XQ_EIO; a damaged one
 * (bad magic, version, checksum, a line that does not parse, a value out of range) is
 * XQ_EFORMAT, XQ_EVERSION or XQ_ECHECKSUM with the file and the line named; t is left
 * untouched on any error. */
int xqc_members_load(xqc_members_t *t, const char *path, xq_errbuf_t *eb);

#endif
