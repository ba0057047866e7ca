#!/usr/bin/env bash
# chaos.sh: the chaos soak. A whole local campaign (coordinator, trainer, two workers, the
# tiny net) runs while faults from a catalogue of 22 kinds (kill -9 and SIGSTOP of each
# daemon, a locked database, a full disk, flipped bytes in a segment, a net and a
# checkpoint, a moved candidate, a diverging trainer, a clock step, a connection flood, a
# slow reader, hostile and foreign peers, a forged population member) strike, every kind
# once per round in an order and
# at moments drawn from a seed, and the campaign's invariants are
# checked every second: every acknowledged game stored exactly once, every announced
# promotion kept across restarts, self-play never standing still past a bound, the
# coordinator's memory bounded, the trainer's newest checkpoint loadable, the campaign id
# unchanged, no daemon exiting by itself. Prints one row per fault kind (injected,
# survived, violations) and the command that reproduces the run; exit 1 on any violation.
#
# usage: scripts/bench/chaos.sh [--minutes M] [--seed S] [--bin BUILD] [--kinds K1,K2]
#                               [--population K] [--out DIR] [--list] [--help]
# As root it runs in a mount namespace of its own with the campaign on a tmpfs, so that the
# full-disk fault can fill it; elsewhere that kind is skipped and said so.
# scripts/test.sh runs a 5-minute soak and a 3-minute one with --population 2 (a population
# of two trainers; the trainer faults strike member 1); docs/results.md has a 60-minute one.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [ "$(id -u)" -eq 0 ] && [ "${XQZ_CHAOS_NS:-}" != 1 ] && command -v unshare >/dev/null &&
   unshare -m true 2>/dev/null; then
  XQZ_CHAOS_NS=1 exec unshare -m "$0" "$@"
fi
if [ "${XQZ_CHAOS_NS:-}" = 1 ]; then mount --make-rprivate / 2>/dev/null || true; fi
exec python3 "$here/chaos.py" "$@"
