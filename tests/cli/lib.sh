# lib.sh: shared by the command-line and integration test scripts (sourced, not run).
# check NAME COMMAND... runs COMMAND and prints "ok NAME" or "FAIL NAME"; finish prints the
# closing "N passed, M failed" line and returns non-zero when anything failed.
fails=0 total=0
check() {
  local name=$1; shift
  total=$((total + 1))
  if "$@"; then echo "ok   $name"; else echo "FAIL $name"; fails=$((fails + 1)); fi
}
finish() {
  echo "$((total - fails)) passed, $fails failed"
  [ "$fails" -eq 0 ]
}
