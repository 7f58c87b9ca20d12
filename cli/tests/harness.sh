# cli/tests/harness.sh — sourced by the CLI's shell tests: a scratch directory (removed on exit) as the working
# directory, and the pass/fail counters. finish prints the tally and returns the test's status.
WORK=$(mktemp -d "${TMPDIR:-/tmp}/posenc-${1:-cli}-test.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
failures=0
checks=0
pass() { checks=$((checks + 1)); }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); echo "FAIL: $*"; }
finish() {
  echo "$((checks - failures))/$checks checks passed"
  [[ $failures -eq 0 ]]
}
