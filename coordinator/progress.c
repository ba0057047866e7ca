/*
 * progress.c: the measured rates behind Status.progress (see progress.h). Two rings: the
 * trainer's (time, step) samples and the times of scored arena pairs.
 */
#include "progress.h"

#include <math.h>
#include <string.h>

#define STEP_EVERY_MS 2000 /* one step sample per 2 s is plenty for a 5-minute rate */
#define STEP_MIN_SPAN_MS 10000

void xqc_progress_trainer(xqc_progress_t *p, uint64_t now_ms, uint64_t step,
                          uint64_t candidate_every, uint64_t max_steps) {
  if (candidate_every) {
    p->candidate_every = candidate_every;
    p->max_steps = max_steps;
  }
  const int N = XQC_PROGRESS_STEP_SAMPLES;
  if (p->step_n) {
    int last = (p->step_head + N - 1) % N;
    if (step < p->step[last]) {
      p->step_n = 0; /* went back: measure afresh */
    } else if (now_ms - p->step_ms[last] < STEP_EVERY_MS) {
      return; /* a sample every 2 s is enough */
    }
  }
  p->step_ms[p->step_head] = now_ms;
  p->step[p->step_head] = step;
  p->step_head = (p->step_head + 1) % N;
  if (p->step_n < N) p->step_n++;
}

double xqc_progress_step_rate(const xqc_progress_t *p, uint64_t now_ms) {
  const int N = XQC_PROGRESS_STEP_SAMPLES;
  if (p->step_n < 2) return NAN;
  int last = (p->step_head + N - 1) % N;
  if (now_ms - p->step_ms[last] > XQC_PROGRESS_STEP_STALE_MS) return NAN;
  int first = (p->step_head + N - p->step_n) % N;
  while (first != last && p->step_ms[last] - p->step_ms[first] > XQC_PROGRESS_STEP_SPAN_MS)
    first = (first + 1) % N;
  uint64_t dt = p->step_ms[last] - p->step_ms[first];
  if (dt < STEP_MIN_SPAN_MS) return NAN;
  return (double)(p->step[last] - p->step[first]) * 1000.0 / (double)dt;
}

void xqc_progress_pairs(xqc_progress_t *p, int kind, uint64_t match, int done, uint64_t now_ms) {
  if (kind < 0 || kind > 1) return;
  if (p->seen_match[kind] != match || done < p->seen_done[kind]) {
    p->seen_match[kind] = match;
    p->seen_done[kind] = done;
    return;
  }
  for (int i = p->seen_done[kind]; i < done; i++) {
    p->pair_ms[p->pair_head] = now_ms;
    p->pair_head = (p->pair_head + 1) % XQC_PROGRESS_PAIRS;
    if (p->pair_n < XQC_PROGRESS_PAIRS) p->pair_n++;
  }
  p->seen_done[kind] = done;
}

double xqc_progress_pair_rate(const xqc_progress_t *p, uint64_t now_ms) {
  const int N = XQC_PROGRESS_PAIRS;
  int n = 0;
  uint64_t oldest = now_ms;
  for (int k = 0; k < p->pair_n; k++) {
    uint64_t t = p->pair_ms[(p->pair_head + N - 1 - k) % N];
    if (now_ms - t > XQC_PROGRESS_PAIR_SPAN_MS) break;
    oldest = t;
    n++;
  }
  if (n < 2 || now_ms <= oldest) return NAN;
  /* n pairs in the time since the oldest of them: the first pair's own duration is not
   * seen, so n - 1 intervals; the time since the newest counts, so a stall lowers it. */
  return (double)(n - 1) * 1000.0 / (double)(now_ms - oldest);
}

uint64_t xqc_progress_next_multiple(uint64_t step, uint64_t every) {
  if (!every) return 0;
  return (step / every + 1) * every;
}

double xqc_progress_eta(double left, double rate) {
  if (!isfinite(rate) || rate <= 0 || !isfinite(left)) return NAN;
  return left > 0 ? left / rate : 0.0;
}
