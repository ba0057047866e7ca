#!/usr/bin/env bash
# test_cli_symbols.sh BINARY...: the shipped programs take BLAS from OpenBLAS itself. None
# defines cblas_sgemm (a bench counts GEMM time through nn_sgemm's switch, never by
# interposing the symbol for every subcommand), and each that multiplies matrices has it
# undefined, to be bound to the library.
set -u
. "$(dirname "$0")/lib.sh"
for bin in "$@"; do
  name=$(basename "$bin")
  syms=$(nm "$bin" 2>&1); rc=$?
  check "$name: nm reads it" test "$rc" -eq 0
  check "$name: does not define cblas_sgemm" \
    bash -c '! grep -qE "^[0-9a-f]+ [TtWw] cblas_sgemm$" <<<"$1"' _ "$syms"
  check "$name: takes cblas_sgemm from OpenBLAS" grep -qE "^ +U cblas_sgemm$" <<<"$syms"
done
finish
