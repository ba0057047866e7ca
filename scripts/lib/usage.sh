# usage.sh: a script's --help is its opening comment (sourced, not run).
#   script_usage FILE   prints FILE's comment lines from line 2 to the first line that is
#                       not a comment, without their "# ", so no line of shell slips in
#                       however long the comment grows.
script_usage() {
  awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$1"
}
