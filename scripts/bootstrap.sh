#!/usr/bin/env bash
# Installs every Debian package xqzero's build and tests need; with --bench also what the
# benchmarks and fixture generators need (PyTorch); with --build-only just what building
# the programs needs (worker hosts, the container's build stage). Idempotent: prints
# nothing and touches nothing when all is already present. Uses sudo when not run as root.
set -euo pipefail

build_pkgs=(build-essential cmake pkg-config git ca-certificates
      libzmq3-dev libprotobuf-c-dev protobuf-c-compiler libopenblas-dev
      libuv1-dev libsqlite3-dev libinih-dev libsodium-dev)
# The tests: chromium is the headless browser of the dashboard test; iproute2 makes the
# network namespaces of test_netns; shellcheck checks the deployment scripts; faketime
# steps the coordinator's wall clock in the chaos soak (scripts/bench/chaos.sh); util-linux
# gives it unshare and mount for the full-disk fault.
test_pkgs=(libcmocka-dev fairy-stockfish sqlite3 python3
      chromium fonts-dejavu-core iproute2 procps shellcheck faketime util-linux)
pkgs=("${build_pkgs[@]}" "${test_pkgs[@]}")
for a in "$@"; do
  case "$a" in
    --build-only) pkgs=("${build_pkgs[@]}") ;;
    --bench) pkgs+=(python3-torch python3-numpy hyperfine) ;;
    --fuzz) pkgs+=(clang libclang-rt-14-dev) ;;
    -h|--help) echo "usage: scripts/bootstrap.sh [--build-only] [--bench] [--fuzz]"; exit 0 ;;
    *) echo "bootstrap.sh: unknown option '$a' (try --help)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "bootstrap.sh: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  SUDO=sudo
fi
echo "bootstrap: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "bootstrap: done"
