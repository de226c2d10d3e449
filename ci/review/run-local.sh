#!/usr/bin/env bash
# Runs the steps of `action.yml` here, in its order and with the variables
# it sets, against the git repository in the current folder:
#
#   ci/review/run-local.sh --base main [--fail-on P1] [--focus TEXT] [--args "…"]
#
# What only GitHub has is stood in for: `upload-sarif` checks the SARIF
# file is a SARIF 2.1.0 log, and `gh` is a stand-in that writes the comment
# it is given to zidane-review/comment.md (with the arguments in
# zidane-review/gh-args). The exit code is the action's.
set -uo pipefail

steps="$(cd "$(dirname "$0")" && pwd)/steps.sh"
base="" fail_on="" focus="" args=""
while [ $# -gt 0 ]; do
  case "$1" in
    --base) base="$2"; shift 2 ;;
    --fail-on) fail_on="$2"; shift 2 ;;
    --focus) focus="$2"; shift 2 ;;
    --args) args="$2"; shift 2 ;;
    *) echo "usage: $0 --base BRANCH [--fail-on P1] [--focus TEXT] [--args OPTIONS]" >&2; exit 2 ;;
  esac
done
[ -n "$base" ] || { echo "$0: --base BRANCH is needed" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# What the runner gives a composite action.
export GITHUB_ACTIONS=true GITHUB_EVENT_NAME=pull_request GITHUB_BASE_REF="$base"
export GITHUB_ACTION_PATH="$(cd "$(dirname "$0")/../.." && pwd)"
export GITHUB_OUTPUT="$work/output" GITHUB_PATH="$work/path" GITHUB_STEP_SUMMARY="$work/summary" RUNNER_TEMP="$work"
: >"$GITHUB_OUTPUT"
output() { sed -n "s/^$1=//p" "$GITHUB_OUTPUT" | tail -1; }

echo "::group::Install zidane"
ZIDANE_REVIEW_SOURCE="$GITHUB_ACTION_PATH" "$steps" install || exit $?
while read -r dir; do export PATH="$dir:$PATH"; done <"$GITHUB_PATH" 2>/dev/null || true
echo "::group::Review"
ZIDANE_REVIEW_BASE="$base" ZIDANE_REVIEW_FAIL_ON="$fail_on" ZIDANE_REVIEW_FOCUS="$focus" \
  ZIDANE_REVIEW_ARGS="$args" ZIDANE_APPROVE=ask "$steps" review
review=$?
sarif="$(output sarif)" markdown="$(output markdown)"
echo "::group::Upload SARIF (checked here)"
if [ -n "$sarif" ]; then
  python3 - "$sarif" <<'PY' || exit 1
import json, sys
log = json.load(open(sys.argv[1]))
assert log["version"] == "2.1.0", "not SARIF 2.1.0"
assert log["runs"][0]["tool"]["driver"]["name"] == "zidane"
print(f"{sys.argv[1]}: SARIF 2.1.0, {len(log['runs'][0]['results'])} result(s)")
PY
fi
echo "::group::Comment (gh stand-in)"
if [ -n "$markdown" ]; then
  mkdir -p "$work/bin"
  cat >"$work/bin/gh" <<SH
#!/usr/bin/env bash
echo "\$@" >>"$(dirname "$markdown")/gh-args"
while [ \$# -gt 0 ]; do [ "\$1" = --body-file ] && cp "\$2" "$(dirname "$markdown")/comment.md"; shift; done
SH
  chmod +x "$work/bin/gh"
  PATH="$work/bin:$PATH" GH_TOKEN=local ZIDANE_REVIEW_PR=1 "$steps" comment || exit $?
fi
echo "::group::Verdict"
[ "$review" = 0 ] || [ "$review" = 3 ] || exit "$review"
ZIDANE_REVIEW_FAIL_ON="$fail_on" "$steps" verdict
