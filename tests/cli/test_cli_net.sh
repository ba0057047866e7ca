#!/usr/bin/env bash
# test_cli_net.sh XQZ: `xqz net init` / `xqz net info` as a user runs them: the file they
# write, refusing to overwrite, and clear errors for bad arguments and damaged files.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$("$XQZ" net init --size tiny --seed 3 --id 0x2a --out "$dir/a.xqzn" 2>&1); rc=$?
check "init exits 0" test "$rc" -eq 0
check "init reports the architecture" grep -q "2x16 net" <<<"$out"
info=$("$XQZ" net info "$dir/a.xqzn" 2>&1); rc=$?
check "info exits 0" test "$rc" -eq 0
check "info says there is no global pooling" grep -q "global pooling: *none" <<<"$info"
check "info says there is no survival head" grep -q "survival head: *none" <<<"$info"
check "a plain net is written as format version 2 (older builds read it)" grep -q "format version: *2$" <<<"$info"
# init_info WHAT SIZE NAME VERSION: `net init --size SIZE` exits 0 and names NAME, and
# `net info` of its file shows format version VERSION; leaves the info in $ninfo.
init_info() {
  local out rc
  out=$("$XQZ" net init --size "$2" --seed 3 --out "$dir/$2.xqzn" 2>&1); rc=$?
  check "init of a $1 net exits 0" test "$rc" -eq 0
  check "init names the $1 architecture" grep -q "$3 net" <<<"$out"
  ninfo=$("$XQZ" net info "$dir/$2.xqzn" 2>&1)
  check "a $1 net is written as format version $4" grep -q "format version: *$4$" <<<"$ninfo"
}
init_info survival tiny-gs 2x16gs 4
check "info shows the survival head" grep -q "survival head: *yes" <<<"$ninfo"
init_info pooling tiny-g 2x16g 3
check "info shows the global pooling" grep -q "global pooling: *in every block (2x16g)" <<<"$ninfo"
ginfo=$("$XQZ" net init --size 6x64g2 --out "$dir/g2.xqzn" >/dev/null 2>&1 && "$XQZ" net info "$dir/g2.xqzn" 2>&1)
check "info shows every K-th block" grep -q "in the last block and every 2 blocks before it (6x64g2)" <<<"$ginfo"
check "info says there are no line convolutions" grep -q "line convs: *none" <<<"$info"
init_info line tiny-l 2x16l 5
check "info shows the line convolutions" grep -q "line convs: *in every block" <<<"$ninfo"
check "a plain net reads the 18 planes of input version 1" grep -q "input version: *1 (18 planes)" <<<"$info"
init_info attack-plane tiny-la 2x16la 5
check "info shows the attack planes" grep -q "input version: *2 (20 planes, with the attack planes)" <<<"$ninfo"
# A net with the attack planes plays: the search feeds it its own 20-plane encoding.
arena=$("$XQZ" arena "net:$dir/tiny-la.xqzn:8" random --games 2 --max-plies 40 2>&1); rc=$?
check "an attack-plane net plays an arena match" test "$rc" -eq 0
init_info wide-value tiny-v 2x16v 2
check "info shows the wide value head's four channels" grep -q "value head 4 ch, value hidden 32" <<<"$ninfo"
check "a plain net's value head has one channel" grep -q "value head 1 ch" <<<"$info"
# The wide value head plays: the search evaluates it through the folded inference path.
arena=$("$XQZ" arena "net:$dir/tiny-v.xqzn:8" random --games 2 --max-plies 40 2>&1); rc=$?
check "a wide-value net plays an arena match" test "$rc" -eq 0
"$XQZ" net init --size tiny-gl --out "$dir/gl.xqzn" >/dev/null 2>&1; rc=$?
check "pooling and lines together exits 2" test "$rc" -eq 2
"$XQZ" net init --size tiny-gg --out "$dir/c.xqzn" >/dev/null 2>&1; rc=$?
check "malformed pooling spelling exits 2" test "$rc" -eq 2
check "info shows the id" grep -q "net id: *000000000000002a" <<<"$info"
check "info verifies the checksum" grep -q "(verified)" <<<"$info"
"$XQZ" net init --size tiny --seed 3 --id 0x2a --out "$dir/b.xqzn" >/dev/null 2>&1
check "same seed and id give the same weights" cmp -s <(tail -c 4096 "$dir/a.xqzn") <(tail -c 4096 "$dir/b.xqzn")
cp "$dir/a.xqzn" "$dir/keep.xqzn"
err=$("$XQZ" net init --size tiny --seed 9 --out "$dir/a.xqzn" 2>&1); rc=$?
check "refuses to overwrite" test "$rc" -eq 1
check "says how to overwrite" grep -q -- "--force" <<<"$err"
check "existing file untouched" cmp -s "$dir/a.xqzn" "$dir/keep.xqzn"
"$XQZ" net init --size tiny --seed 9 --force --out "$dir/a.xqzn" >/dev/null 2>&1
check "--force replaces" bash -c "! cmp -s '$dir/a.xqzn' '$dir/keep.xqzn'"
head -c 1000 "$dir/keep.xqzn" >"$dir/trunc.xqzn"
err=$("$XQZ" net info "$dir/trunc.xqzn" 2>&1); rc=$?
check "truncated file fails" test "$rc" -ne 0
check "truncated file named as such" grep -qi "truncated" <<<"$err"
cp "$dir/keep.xqzn" "$dir/flip.xqzn"
size=$(stat -c %s "$dir/flip.xqzn")
printf '\x55' | dd of="$dir/flip.xqzn" bs=1 seek=$((size - 100)) conv=notrunc status=none
err=$("$XQZ" net info "$dir/flip.xqzn" 2>&1); rc=$?
check "corrupt payload fails" test "$rc" -ne 0
check "corrupt payload named as a checksum error" grep -qi "crc\|checksum" <<<"$err"
"$XQZ" net init --size huge --out "$dir/c.xqzn" >/dev/null 2>&1; rc=$?
check "unknown size exits 2" test "$rc" -eq 2
"$XQZ" net init --blocks 6 --out "$dir/c.xqzn" >/dev/null 2>&1; rc=$?
check "--blocks without --channels exits 2" test "$rc" -eq 2
"$XQZ" net init --size tiny >/dev/null 2>&1; rc=$?
check "missing --out exits 2" test "$rc" -eq 2
check "nothing written on bad arguments" test ! -e "$dir/c.xqzn"
finish
