# cli/tests/harness.sh — sourced by the CLI's shell tests: a scratch directory (removed on exit) as the working
# directory, and the pass/fail counters. finish prints the tally and returns the test's status.
# `scenario TEXT` names what the next pass/fail is about; with POSENC_TEST_RECORD set to a file, every outcome
# is appended to it as one JSON line {"suite", "scenario", "ok", "detail"} (the main job's reliability page).
WORK=$(mktemp -d "${TMPDIR:-/tmp}/posenc-${1:-cli}-test.XXXXXX")
SUITE=${1:-cli}
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1
failures=0
checks=0
current_scenario=""
scenario() { current_scenario=$*; }
json_text() {  # a JSON string literal of $1 (backslash, quote and control characters escaped)
  local s=$1
  s=${s//\\/\\\\}; s=${s//\"/\\\"}; s=${s//$'\n'/\\n}; s=${s//$'\t'/\\t}; s=${s//$'\r'/\\r}
  printf '"%s"' "$(printf '%s' "$s" | tr -d '\000-\010\013\014\016-\037')"
}
record_outcome() {  # record_outcome OK DETAIL
  [[ -n ${POSENC_TEST_RECORD:-} ]] || return 0
  printf '{"suite": %s, "scenario": %s, "ok": %s, "detail": %s}\n' "$(json_text "$SUITE")" \
    "$(json_text "${current_scenario:-unnamed}")" "$1" "$(json_text "$2")" >>"$POSENC_TEST_RECORD"
}
pass() { checks=$((checks + 1)); record_outcome true "${*:-}"; }
fail() { checks=$((checks + 1)); failures=$((failures + 1)); echo "FAIL: $*"; record_outcome false "$*"; }
finish() {
  echo "$((checks - failures))/$checks checks passed"
  [[ $failures -eq 0 ]]
}
