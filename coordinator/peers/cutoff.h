/*
 * cutoff.h: the rate limit on bad messages. Faults (malformed or unexpected messages,
 * inconsistent games) are counted per identity, not per connection: the peer's CURVE key
 * when it has one, else its worker id, else its routing id. max_peer_errors faults within
 * fault_window_s seconds cut the identity off: every message from it, on any connection,
 * is ignored for cutoff_s seconds, so reconnecting does not escape the cut. The cut and
 * the return are logged once each.
 *
 * Ownership: the caller owns the struct (zeroed); xqc_cutoff_close frees it.
 */
#ifndef XQC_CUTOFF_H
#define XQC_CUTOFF_H

#include <stdbool.h>
#include <stdint.h>

#define XQC_IDENTITY_MAX 160

typedef struct {
  char id[XQC_IDENTITY_MAX];
  uint64_t window_start_ms; /* first fault of the current window */
  int64_t faults;           /* faults in the current window */
  uint64_t until_ms;        /* end of the cut (when cut) */
  bool cut;
} xqc_cutoff_entry_t;

typedef struct {
  xqc_cutoff_entry_t *v; /* (n) */
  int n, cap;
  int ncut;              /* entries cut now */
  uint64_t cuts;         /* cuts ever made */
} xqc_cutoff_t;

typedef struct {
  int64_t max_faults;
  uint64_t window_ms, cutoff_ms;
} xqc_cutoff_limits_t;

/* Counts one fault against id at now_ms. Returns true when this fault cuts id off. */
bool xqc_cutoff_fault(xqc_cutoff_t *t, const char *id, uint64_t now_ms,
                      const xqc_cutoff_limits_t *lim);
/* true while id is cut off (a cut that has run out is lifted here, and logged). */
bool xqc_cutoff_active(xqc_cutoff_t *t, const char *id, uint64_t now_ms);
/* Lifts the cuts that have run out (logging each) and forgets identities with neither a
 * cut nor a fault in the current window. Called from the coordinator's timer. */
void xqc_cutoff_expire(xqc_cutoff_t *t, uint64_t now_ms, const xqc_cutoff_limits_t *lim);
void xqc_cutoff_close(xqc_cutoff_t *t);

#endif
