#!/usr/bin/env bash
# The steps of the `zidane review` CI set-up, one function each, shared by
# the composite GitHub Action (`action.yml`), the GitLab CI job
# (`ci/review/gitlab-ci.yml`) and the local runner (`ci/review/run-local.sh`).
#
#   steps.sh install   zidane on PATH (built from this repository when missing)
#   steps.sh review    zidane review --base BASE --sarif … --markdown …
#   steps.sh comment   the Markdown as a pull-request (merge-request) comment
#   steps.sh verdict   the review's exit code (after the uploads)
#
# Inputs (environment): ZIDANE_REVIEW_BASE (the base branch), ZIDANE_REVIEW_OUT
# (the output folder, default ./zidane-review), ZIDANE_REVIEW_FAIL_ON (P0…P3),
# ZIDANE_REVIEW_FOCUS, ZIDANE_REVIEW_ARGS (more options, e.g. --model),
# ZIDANE_REVIEW_SOURCE (the checkout to build zidane from); the provider key
# in its usual variable (ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY).
set -euo pipefail

out="${ZIDANE_REVIEW_OUT:-zidane-review}"
source_dir="${ZIDANE_REVIEW_SOURCE:-$(cd "$(dirname "$0")/../.." && pwd)}"

say() { echo "zidane-review: $*" >&2; }

# Appends a line to a file the platform reads, when it gives one.
platform_file() { [ -n "${1:-}" ] && echo "$2" >>"$1" || true; }

install() {
  if command -v zidane >/dev/null 2>&1; then
    say "using $(command -v zidane) ($(zidane --version | head -1))"
    return
  fi
  local root="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/zidane-install"
  say "building zidane from $source_dir into $root"
  cargo install --locked --quiet --path "$source_dir/crates/zidane-cli" --root "$root"
  platform_file "${GITHUB_PATH:-}" "$root/bin"
  export PATH="$root/bin:$PATH"
  zidane --version | head -1
}

# The base as git knows it here: the branch, else the remote's (a CI
# checkout of a pull request has no local branch of its base).
base_ref() {
  local base="$1"
  if git rev-parse --verify --quiet "$base^{commit}" >/dev/null; then
    echo "$base"
    return
  fi
  if ! git rev-parse --verify --quiet "origin/$base^{commit}" >/dev/null; then
    say "fetching origin/$base"
    git fetch --quiet --no-tags origin "+refs/heads/$base:refs/remotes/origin/$base"
  fi
  echo "origin/$base"
}

review() {
  local base="${ZIDANE_REVIEW_BASE:?ZIDANE_REVIEW_BASE names the base branch}"
  mkdir -p "$out"
  local args=(review --base "$(base_ref "$base")" --sarif "$out/review.sarif" --markdown "$out/review.md")
  [ -n "${ZIDANE_REVIEW_FAIL_ON:-}" ] && args+=(--fail-on "$ZIDANE_REVIEW_FAIL_ON")
  [ -n "${ZIDANE_REVIEW_FOCUS:-}" ] && args+=(--focus "$ZIDANE_REVIEW_FOCUS")
  # shellcheck disable=SC2206 # options split on spaces, as written
  [ -n "${ZIDANE_REVIEW_ARGS:-}" ] && args+=($ZIDANE_REVIEW_ARGS)
  local code=0
  zidane "${args[@]}" >"$out/review.txt" || code=$?
  cat "$out/review.txt"
  echo "$code" >"$out/exit-code"
  platform_file "${GITHUB_OUTPUT:-}" "exit-code=$code"
  platform_file "${GITHUB_OUTPUT:-}" "sarif=$out/review.sarif"
  platform_file "${GITHUB_OUTPUT:-}" "markdown=$out/review.md"
  [ -n "${GITHUB_STEP_SUMMARY:-}" ] && [ -f "$out/review.md" ] && cat "$out/review.md" >>"$GITHUB_STEP_SUMMARY"
  # 3: findings at or above --fail-on, reported by `verdict` after the
  # uploads; anything else non-zero is a failed review.
  if [ "$code" != 0 ] && [ "$code" != 3 ]; then
    say "the review failed (exit code $code)"
    exit "$code"
  fi
}

comment() {
  local body="$out/review.md"
  [ -f "$body" ] || { say "no $body to post"; return; }
  if [ -n "${GITHUB_ACTIONS:-}" ]; then
    local pr="${ZIDANE_REVIEW_PR:?ZIDANE_REVIEW_PR names the pull request}"
    # One comment per pull request, edited on later runs.
    gh pr comment "$pr" --body-file "$body" --edit-last 2>/dev/null || gh pr comment "$pr" --body-file "$body"
  elif [ -n "${GITLAB_CI:-}" ]; then
    local mr="${CI_MERGE_REQUEST_IID:?CI_MERGE_REQUEST_IID: run the job in a merge-request pipeline}"
    glab mr note "$mr" --message "$(cat "$body")"
  else
    say "not in GitHub Actions or GitLab CI: the comment is $body"
  fi
}

verdict() {
  local code
  code="$(cat "$out/exit-code" 2>/dev/null || echo 1)"
  [ "$code" = 0 ] || say "findings at or above ${ZIDANE_REVIEW_FAIL_ON:-the threshold} (exit code $code)"
  exit "$code"
}

case "${1:-}" in
  install | review | comment | verdict) "$1" ;;
  *)
    echo "usage: $0 install|review|comment|verdict" >&2
    exit 2
    ;;
esac
