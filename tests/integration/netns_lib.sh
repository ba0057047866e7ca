# netns_lib.sh: two network namespaces joined by a veth pair, for the tests that need two
# hosts (sourced after tests/cli/lib.sh, not run). netns_setup makes them: nsA holds
# 10.77.0.1, nsB 10.77.0.2, loopback up in both; it skips the test (exit 77, a failure under
# CI=true) when this machine cannot: not root, no ip, no namespaces or veth. netns_cleanup
# removes them. netns_start is a test's whole prologue: an EXIT trap that stops the test's
# daemons (the array pids) and shows their logs on a failure (dir/*.log), then removes the
# namespaces; the namespaces; and dir, a fresh temporary directory. Daemons are started as
# "ip netns exec NS PROGRAM ... &": ip execs the program, so $! is the daemon itself and
# SIGTERM reaches it.
nsA=xqzA$$ nsB=xqzB$$ vA=xqzva$$ vB=xqzvb$$
netns_setup() {
  if [ "$(id -u)" -ne 0 ]; then skip_test "needs root for network namespaces (ip netns)"; fi
  if ! command -v ip >/dev/null; then skip_test "needs ip (iproute2) for network namespaces"; fi
  if ! ip netns add "$nsA" 2>/dev/null || ! ip netns add "$nsB" 2>/dev/null; then
    skip_test "cannot create a network namespace here (ip netns add failed)"
  fi
  if ! ip link add "$vA" type veth peer name "$vB" 2>/dev/null; then
    skip_test "cannot create a veth pair here (ip link add type veth failed)"
  fi
  ip link set "$vA" netns "$nsA"
  ip link set "$vB" netns "$nsB"
  ip -n "$nsA" addr add 10.77.0.1/24 dev "$vA"
  ip -n "$nsB" addr add 10.77.0.2/24 dev "$vB"
  ip -n "$nsA" link set "$vA" up; ip -n "$nsA" link set lo up
  ip -n "$nsB" link set "$vB" up; ip -n "$nsB" link set lo up
}
netns_cleanup() {
  ip netns del "$nsA" 2>/dev/null; ip netns del "$nsB" 2>/dev/null  # the veth pair goes with them
  ip link del "$vA" 2>/dev/null
}
netns_start() {
  dir= pids=()
  trap '[ -n "$dir" ] && stop_and_report "$dir" "$dir"/*.log; netns_cleanup' EXIT
  netns_setup
  dir=$(mktemp -d)
}
