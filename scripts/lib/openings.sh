# openings.sh: the opening files of scripts/bench/ (sourced, not run). Nets at a fixed
# number of simulations play without noise and the alphabeta anchors are deterministic, so
# an opening played twice repeats its game: a match has as many distinct games as twice
# its file's lines.
#   openings_lines FILE        prints FILE's openings, without comments and blank lines
#   openings_games FILE        prints how many distinct games FILE holds (2 a line)
#   openings_halves FILE DIR   writes alternate lines to DIR/open1 and DIR/open2, so that
#                              two halves of a match run at once never share an opening
openings_lines() {
  grep -v '^\s*\(#\|$\)' "$1"
}
openings_games() {
  echo $(( $(openings_lines "$1" | wc -l) * 2 ))
}
openings_halves() {
  openings_lines "$1" | awk -v d="$2" '{print > (d "/open" (NR % 2 + 1))}'
}
