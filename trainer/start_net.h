/*
 * start_net.h: the net a fresh trainer starts from. Without a checkpoint the trainer does
 * not invent its own network: it asks the coordinator for the best net (StatusRequest),
 * fetches it in NetChunks (size and CRC-32 verified, cached in the trainer's directory) and
 * trains on from those weights, so the first candidate is a descendant of the net the
 * workers play, with the architecture the campaign chose (coordinator setting net_size).
 */
#ifndef XQ_TRAINER_START_NET_H
#define XQ_TRAINER_START_NET_H

#include <signal.h>
#include <stdint.h>

#include "support/error.h"
#include "wire/curve.h"

/* Fetches the coordinator's best net into dir; writes its path into path_out. Keeps
 * asking (logging every attempt that times out) until it succeeds or *stop becomes
 * non-zero (XQ_EIO); an error answer or a damaged net fails at once (reason in eb). */
int trainer_fetch_best_net(const char *endpoint, const xq_curve_t *curve, const char *dir,
                           volatile sig_atomic_t *stop, char *path_out, size_t path_cap,
                           uint64_t *net_id, xq_errbuf_t *eb);

#endif
