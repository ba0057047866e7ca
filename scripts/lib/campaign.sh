# campaign.sh: run a local campaign from a script (sourced, not run). Shared by
# scripts/quickstart.sh and scripts/bench/learning.sh so both start, watch and stop the
# daemons the same way.
#
#   xqz_build_release BUILD            configure + build Release (no tests) in BUILD
#   campaign_start BUILD CAMP PORT     coordinator (ROUTER PORT, PUB PORT+1, dashboard on
#                                      http://127.0.0.1:PORT+25/), trainer and
#                                      one worker; extra arguments come from the arrays
#                                      COORD_ARGS, TRAINER_ARGS, WORKER_ARGS (may be empty)
#                                      (1 when the coordinator does not start; a taken port
#                                      is named with the --port that avoids it).
#                                      MEMBERS=K (K >= 2) starts K trainers instead, the
#                                      members of a population (the coordinator gets
#                                      --population K), each in CAMP/trainer-I with
#                                      TRAINER_THREADS / K threads (TRAINER_THREADS
#                                      defaults to the cores).
#   campaign_alive                     0 when every process still runs
#   campaign_progress CAMP             one progress line from the newest log lines
#   campaign_stop                      SIGTERM worker, trainers, then coordinator; waits
#
# Logs go to CAMP/coordinator.log, CAMP/trainer.log (CAMP/trainer-I.log for member I) and
# CAMP/worker.log.

xqz_build_release() {
  local build=$1 jobs
  jobs=$(nproc 2>/dev/null || echo 2)
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DXQZ_TESTS=OFF >/dev/null &&
    cmake --build "$build" -j"$jobs" >/dev/null
}

# bench_xqz [DIR]: sets XQZ to the absolute path of the xqz binary a benchmark runs: XQZ as
# the caller gave it (a relative path is relative to DIR, default the repository root), or
# else a Release build in build-bench/, made after scripts/bootstrap.sh has installed what
# it needs. Run from the repository root.
bench_xqz() {
  if [ -n "${XQZ:-}" ]; then
    case "$XQZ" in /*) ;; *) XQZ="${1:-.}/$XQZ" ;; esac
  else
    scripts/bootstrap.sh
    xqz_build_release build-bench
    XQZ="build-bench/tools/xqz"
  fi
  XQZ=$(cd "$(dirname "$XQZ")" && pwd)/$(basename "$XQZ")
}

CAMPAIGN_PIDS=() CAMPAIGN_TRAINERS=() CAMPAIGN_WORKER=
CAMPAIGN_T0=$SECONDS
_last_pos=0 _last_t=0

# The trainer, or with MEMBERS=K the K members of a population, the cores split among them.
_start_trainers() {
  local build=$1 camp=$2 router=$3 k=${MEMBERS:-1} i threads
  if [ "$k" -lt 2 ]; then
    "$build/trainer/xqz-trainer" --coordinator "$router" --dir "$camp/trainer" \
      "${TRAINER_ARGS[@]}" >>"$camp/trainer.log" 2>&1 &
    CAMPAIGN_TRAINERS=($!)
    return
  fi
  threads=$(( ${TRAINER_THREADS:-$(nproc 2>/dev/null || echo 2)} / k ))
  [ "$threads" -ge 1 ] || threads=1
  CAMPAIGN_TRAINERS=()
  for i in $(seq "$k"); do
    "$build/trainer/xqz-trainer" --coordinator "$router" --dir "$camp/trainer-$i" \
      --threads "$threads" "${TRAINER_ARGS[@]}" >>"$camp/trainer-$i.log" 2>&1 &
    CAMPAIGN_TRAINERS+=($!)
  done
}

campaign_start() {
  local build=$1 camp=$2 port=$3
  local router=tcp://127.0.0.1:$port pub=tcp://127.0.0.1:$((port + 1))
  mkdir -p "$camp"
  CAMPAIGN_PIDS=()
  CAMPAIGN_T0=$SECONDS _last_pos=0 _last_t=$SECONDS
  local pop=()
  [ "${MEMBERS:-1}" -ge 2 ] && pop=(--population "$MEMBERS")
  "$build/coordinator/xqz-coordinator" --campaign "$camp" --router "$router" --pub "$pub" \
    --http "127.0.0.1:$((port + 25))" --status_ms 5000 "${pop[@]}" "${COORD_ARGS[@]}" \
    >>"$camp/coordinator.log" 2>&1 &
  CAMPAIGN_PIDS+=($!)
  local _
  for _ in $(seq 50); do
    grep -q "listening" "$camp/coordinator.log" 2>/dev/null && break
    kill -0 "${CAMPAIGN_PIDS[0]}" 2>/dev/null || break
    sleep 0.2
  done
  if ! kill -0 "${CAMPAIGN_PIDS[0]}" 2>/dev/null; then
    echo "the coordinator did not start:" >&2
    tail -5 "$camp/coordinator.log" >&2
    if tail -5 "$camp/coordinator.log" | grep -qi "address already in use"; then
      echo "port $port, $((port + 1)) or $((port + 25)) is taken (another campaign, or another" \
           "program): run again with --port N for ports N, N+1 and N+25, e.g. --port" \
           "$((port + 100))" >&2
    fi
    return 1
  fi
  _start_trainers "$build" "$camp" "$router"
  "$build/worker/xqz-worker" --coordinator "$router" --cache "$camp/worker-cache" \
    --spool "$camp/worker-spool" "${WORKER_ARGS[@]}" >>"$camp/worker.log" 2>&1 &
  CAMPAIGN_WORKER=$!
  CAMPAIGN_PIDS+=("${CAMPAIGN_TRAINERS[@]}" "$CAMPAIGN_WORKER")
}

campaign_alive() {
  local p
  for p in "${CAMPAIGN_PIDS[@]}"; do kill -0 "$p" 2>/dev/null || return 1; done
}

_field() { sed -n "s/.* $1=\\([^ ]*\\).*/\\1/p"; }

campaign_progress() {
  local camp=$1 st tr pos rate gating anchors measuring el
  st=$(grep " status " "$camp/coordinator.log" | tail -1)
  local tlog=$camp/trainer.log
  [ "${MEMBERS:-1}" -ge 2 ] && tlog=$camp/trainer-1.log
  tr=$(grep "training step=" "$tlog" 2>/dev/null | tail -1)
  pos=$(_field positions <<<"$st"); pos=${pos:-0}
  el=$((SECONDS - CAMPAIGN_T0))
  if [ "$_last_pos" -eq 0 ]; then rate="-"
  else rate=$(( (pos - _last_pos) / (SECONDS - _last_t > 0 ? SECONDS - _last_t : 1) )); fi
  _last_pos=$pos _last_t=$SECONDS
  gating=$(sed -n 's/.*gating="\([^"]*\)".*/\1/p' <<<"$st")
  anchors=$(sed -n 's/.* anchors="\([^"]*\)".*/\1/p' <<<"$st")
  measuring=$(sed -n 's/.* anchor_match="\([^"]*\)".*/\1/p' <<<"$st")
  [ -n "$measuring" ] && anchors="${anchors:-not measured yet} (measuring $measuring)"
  printf '[%3dm%02ds] games %s  positions %s (%s/s)  trainer step %s  loss %s  best %s  gating: %s  best net: %s\n' \
    $((el / 60)) $((el % 60)) "$(_field games <<<"$st")" "$pos" "$rate" \
    "$(_field trainer_step <<<"$st")" "$(_field loss <<<"$tr")" "$(_field best <<<"$st")" \
    "${gating:-none yet}" "${anchors:-not measured yet}"
}

# The closing summary: every gating decision of promotions.log and every anchor match of
# anchors.log as tables (the logs' JSON lines are documented in docs/operations.md).
campaign_summary() {
  local camp=$1
  echo "== gating decisions ($camp/promotions.log)"
  if [ -s "$camp/promotions.log" ]; then
    awk 'function f(k,  m) { if (match($0, "\"" k "\":\"?[^,\"}]*")) {
           m = substr($0, RSTART, RLENGTH); sub("^\"" k "\":\"?", "", m); return m } return "-" }
         BEGIN { printf "   %-16s %7s %-9s %6s %7s %s\n", "net", "step", "W-D-L", "score", "Elo", "decision" }
         f("match") == "-" { printf "   %-16s %7s %-9s %6s %7s %s\n", f("net"), f("step"), "-", "-", "0.0", "net 1"; next }
         { printf "   %-16s %7s %-9s %6.2f %7.1f %s\n", f("net"), f("step"),
                  f("w") "-" f("d") "-" f("l"), f("score"), f("elo"),
                  f("promoted") == "true" ? "promoted" : "rejected" }' "$camp/promotions.log"
    echo "   nets promoted so far (after net 1): $(grep '"promoted":true' "$camp/promotions.log" | grep -vc '"first":true')"
  else
    echo "   none yet"
  fi
  if [ -s "$camp/population.log" ]; then
    echo "== population ($camp/population.log): each member's rating in the last round"
    awk 'function f(k,  m) { if (match($0, "\"" k "\":\"?[^,\"}]*")) {
           m = substr($0, RSTART, RLENGTH); sub("^\"" k "\":\"?", "", m); return m } return "-" }
         /"type":"rating"/ { r = f("round") + 0; if (r > last) { last = r; n = 0 }
                             if (r == last) row[n++] = sprintf("   %-6s %-16s %7s %6.0f [%.0f, %.0f]  gen %s",
                               f("member") == "0" ? "best" : f("member"), f("net"), f("step"),
                               f("elo"), f("lo"), f("hi"), f("generation")) }
         /"type":"exploit"/ { copies++ }
         END { printf "   %-6s %-16s %7s %s\n", "member", "net", "step", "Elo [95%] (the best net = 0)"
               for (i = 0; i < n; i++) print row[i]
               printf "   rounds: %d, copies (exploit and explore): %d\n", last, copies }' "$camp/population.log"
  fi
  echo "== strength against the anchors ($camp/anchors.log)"
  if [ -s "$camp/anchors.log" ]; then
    awk 'function f(k,  m) { if (match($0, "\"" k "\":\"?[^,\"}]*")) {
           m = substr($0, RSTART, RLENGTH); sub("^\"" k "\":\"?", "", m); return m } return "-" }
         BEGIN { printf "   %-9s %-16s %7s %-12s %-9s %6s\n", "promotion", "net", "step", "anchor", "W-D-L", "score" }
         { printf "   %-9s %-16s %7s %-12s %-9s %5.0f%%\n", f("promotion"), f("net"), f("step"),
                  f("anchor"), f("w") "-" f("d") "-" f("l"), 100 * f("score") }' "$camp/anchors.log"
  else
    echo "   none measured yet"
  fi
}

campaign_stop() {
  local p
  # The worker first, then every trainer at once (each writes its checkpoint), then the
  # coordinator.
  if [ -n "$CAMPAIGN_WORKER" ]; then kill -TERM "$CAMPAIGN_WORKER" 2>/dev/null; wait "$CAMPAIGN_WORKER" 2>/dev/null; fi
  for p in "${CAMPAIGN_TRAINERS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for p in "${CAMPAIGN_TRAINERS[@]}"; do wait "$p" 2>/dev/null; done
  if [ -n "${CAMPAIGN_PIDS[0]:-}" ]; then kill -TERM "${CAMPAIGN_PIDS[0]}" 2>/dev/null; wait "${CAMPAIGN_PIDS[0]}" 2>/dev/null; fi
  CAMPAIGN_PIDS=() CAMPAIGN_TRAINERS=() CAMPAIGN_WORKER=
}
