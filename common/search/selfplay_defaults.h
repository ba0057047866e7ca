/*
 * selfplay_defaults.h: the one table of the self-play settings that the standalone self-play
 * (xq_selfplay_config_default: `xqz selfplay`, `xqz bench selfplay`, the worker before a
 * job's settings) and the coordinator's settings table (coordinator/config.c, the campaign's
 * jobs) share. The values are the ones campaigns run with; docs/results.md, "The defaults,
 * and why", gives the reason for each.
 *
 * Each value is a bare literal, never parenthesised, so that XQ_SELFPLAY_DEF_STR spells it
 * as the text the coordinator's rows take ("-0.95"). test_selfplay checks that the two
 * agree.
 */
#ifndef XQ_SELFPLAY_DEFAULTS_H
#define XQ_SELFPLAY_DEFAULTS_H

#define XQ_SELFPLAY_DEF_STR_(x) #x
#define XQ_SELFPLAY_DEF_STR(x) XQ_SELFPLAY_DEF_STR_(x) /* a default as config text */

#define XQ_SELFPLAY_FULL_FRAC 0.25         /* share of moves with a full search */
#define XQ_SELFPLAY_NOISE_FRAC 0.25        /* Dirichlet share at the root (full searches) */
#define XQ_SELFPLAY_TEMP_PLIES 20          /* plies played with temperature 1 */
#define XQ_SELFPLAY_TEMP_FINAL 0           /* temperature after that (0: the most visited) */
#define XQ_SELFPLAY_RESIGN_THRESHOLD -0.95 /* resign below this root value */
#define XQ_SELFPLAY_NO_RESIGN_FRAC 0.1     /* share of games with resignation disabled */

#endif
