#!/usr/bin/env bash
# Runs the ten small tasks with a `zidane` binary against an
# OpenAI-compatible server and prints which end with their check passing.
#
#   evals/small-tasks/run.sh [ZIDANE_BINARY]
#
# Environment: BASE_URL (default http://127.0.0.1:18082/v1), MODEL (default
# qwen2.5-coder-0.5b), OUT (default target/small-tasks/<time>), LIMIT
# (seconds per task, default 300), EXTRA (more flags for zidane), TASKS (a
# pattern of task folders, default all: `TASKS='1[123]-*'`).
set -u
here=$(cd "$(dirname "$0")" && pwd)
zidane=${1:-target/release/zidane}
zidane=$(cd "$(dirname "$zidane")" && pwd)/$(basename "$zidane")
base_url=${BASE_URL:-http://127.0.0.1:18082/v1}
model=${MODEL:-qwen2.5-coder-0.5b}
out=${OUT:-target/small-tasks/$(date +%Y%m%d-%H%M%S)}
limit=${LIMIT:-300}
mkdir -p "$out"
out=$(cd "$out" && pwd)
passed=0
ran=0
printf '%-26s %-6s %6s %5s\n' task result secs exit
for task in "$here"/${TASKS:-[0-9]*}/; do
  name=$(basename "$task")
  work="$out/$name/work"
  rm -rf "$out/$name"
  mkdir -p "$work" "$out/$name/home"
  cp -R "$task/files/." "$work/"
  SECONDS=0
  (
    cd "$work" &&
      ZIDANE_HOME="$out/$name/home" OPENAI_API_KEY=local timeout "$limit" "$zidane" \
        --provider openai-compatible --base-url "$base_url" --model "$model" \
        --approve yolo ${EXTRA:-} "$(cat "$task/prompt.txt")" \
        </dev/null >"$out/$name/stdout" 2>"$out/$name/stderr"
  )
  code=$?
  secs=$SECONDS
  ran=$((ran + 1))
  if (cd "$work" && sh "$task/check.sh" >"$out/$name/check" 2>&1); then
    result=pass
    passed=$((passed + 1))
  else
    result=fail
  fi
  printf '%-26s %-6s %6s %5s\n' "$name" "$result" "$secs" "$code"
done
echo "passed $passed of $ran (outputs in $out)"
