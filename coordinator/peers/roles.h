/*
 * roles.h: the roles a peer has. Which roles may send each message is a column of the
 * command table (coordinator/commands.def), and dispatch (commands.c) checks a peer's roles
 * against it before any handler runs. A peer's roles come from where it connects from,
 * never from what it says:
 *
 *   with CURVE     worker, observer: every key in curve_allow_dir
 *                  trainer: keys in curve_trainer_dir (every allowed key when it is unset)
 *                  admin:   keys in curve_admin_dir
 *                  enrol:   a key in none of them, let in while an enrolment token is
 *                           open; it has no other role (peers.c admits nothing else)
 *   without CURVE  worker, observer: anyone who reaches the port
 *                  trainer: loopback peers and those whose address is in trainer_addresses
 *                  admin:   loopback peers only
 *
 * Nothing here does I/O: the functions are decisions on facts the caller gathered, so
 * they are unit-tested directly (tests/unit/test_coordinator_roles.c).
 */
#ifndef XQC_ROLES_H
#define XQC_ROLES_H

#include <stdbool.h>
#include <stddef.h>

enum {
  XQC_ROLE_WORKER = 1u << 0,   /* plays games and arena pairs */
  XQC_ROLE_TRAINER = 1u << 1,  /* takes batches, sends candidates */
  XQC_ROLE_ADMIN = 1u << 2,    /* bans and unbans */
  XQC_ROLE_OBSERVER = 1u << 3, /* reads status, promotions, nets */
  XQC_ROLE_ENROL = 1u << 4,    /* with CURVE, a key not yet allowed, let in while an enrolment
                                * token is open (enrol.h): EnrolRequest and nothing else */
  XQC_ROLES_ANYONE = XQC_ROLE_WORKER | XQC_ROLE_TRAINER | XQC_ROLE_ADMIN | XQC_ROLE_OBSERVER,
};

/* "trainer" or "worker or observer": the roles in mask, for messages. */
void xqc_roles_text(unsigned mask, char *buf, size_t n);

typedef struct {
  bool curve;                    /* CURVE on (then the key facts count, not the address) */
  bool trainer_key, admin_key;   /* with CURVE: the key is in that directory */
  const char *address;           /* without CURVE: the peer's IP address ("" unknown) */
  const char *trainer_addresses; /* without CURVE: the trainer_addresses setting */
  bool enrolling;                /* with CURVE: the key is not in curve_allow_dir */
} xqc_role_facts_t;

/* The roles of a peer with these facts. */
unsigned xqc_roles_of(const xqc_role_facts_t *f);
/* true for an IPv4 address in 127.0.0.0/8, ::1, or an IPv4-mapped 127.x address. */
bool xqc_address_is_loopback(const char *address);
/* true when address is one of the comma- or space-separated addresses in list. */
bool xqc_address_listed(const char *list, const char *address);
/* true when a ZeroMQ endpoint ("tcp://HOST:PORT", "ipc://...", "inproc://...") can only be
 * reached from this machine: loopback hosts, localhost, ipc and inproc. */
bool xqc_endpoint_is_loopback(const char *endpoint);

#endif
