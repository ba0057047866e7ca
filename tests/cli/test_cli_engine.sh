#!/usr/bin/env bash
# test_cli_engine.sh XQZ: `xqz engine --campaign DIR` plays the campaign's best net
# (nets/best.xqzn), saying which on stderr and nothing on stdout before the GUI speaks; a
# directory that is not a campaign exits 2 naming it. --precision (default auto) says on
# stderr which arithmetic runs; bf16 on a CPU without avx512_bf16 falls back to fp32.
set -u
. "$(dirname "$0")/lib.sh"
XQZ=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir -p "$dir/camp/nets"
"$XQZ" net init --size tiny --out "$dir/camp/nets/00000000000000aa.xqzn" >/dev/null 2>&1
ln -s 00000000000000aa.xqzn "$dir/camp/nets/best.xqzn"
out=$(printf 'uci\nisready\nposition startpos\ngo nodes 20\nquit\n' |
      "$XQZ" engine --campaign "$dir/camp" 2>"$dir/err"); rc=$?
check "the engine on a campaign exits 0" test "$rc" -eq 0
check "it answers the handshake" grep -q '^uciok' <<<"$out"
check "it plays a move" grep -qE '^bestmove [a-i][0-9][a-i][0-9]' <<<"$out"
check "stdout starts with the GUI's answer, not the net's name" \
  bash -c "head -1 <<<\"\$1\" | grep -q '^id name'" _ "$out"
check "stderr names the best net it took" grep -q "best net of campaign .*00000000000000aa.xqzn" "$dir/err"
err=$("$XQZ" engine --campaign "$dir/none" 2>&1 </dev/null); rc=$?
check "a directory that is not a campaign exits 2" test "$rc" -eq 2
check "and is named" grep -qF "$dir/none" <<<"$err"
net=$dir/camp/nets/00000000000000aa.xqzn
err=$(printf 'quit\n' | env -u XQZ_PRECISION "$XQZ" engine --net "$net" 2>&1 >/dev/null); rc=$?
check "the default precision is auto" grep -q "precision=.* (auto: the CPU " <<<"$err"
err=$(printf 'quit\n' | XQZ_CPU_BF16=0 "$XQZ" engine --net "$net" --precision bf16 2>&1 >/dev/null)
check "bf16 on a CPU without it falls back to fp32 and says so" \
  grep -qF "precision=fp32 (bf16 asked for, but the CPU lacks avx512_bf16: fp32)" <<<"$err"
err=$(printf 'quit\n' | XQZ_PRECISION=fp32 "$XQZ" engine --net "$net" 2>&1 >/dev/null)
check "XQZ_PRECISION sets it when --precision is not given" grep -qF "precision=fp32 (fp32 asked for)" <<<"$err"
err=$("$XQZ" engine --net "$net" --precision fp16 2>&1 </dev/null); rc=$?
check "a bad --precision exits 2" test "$rc" -eq 2
check "and names the accepted values" grep -qF "auto, fp32 or bf16, not 'fp16'" <<<"$err"
out=$(printf 'quit\n' | XQZ_CPU_BF16=0 "$XQZ" play --net "$net" --precision bf16 2>&1); rc=$?
check "xqz play takes --precision" test "$rc" -eq 0
check "and says which arithmetic runs" \
  grep -qF "precision=fp32 (bf16 asked for, but the CPU lacks avx512_bf16: fp32)" <<<"$out"
finish
