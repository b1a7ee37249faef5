#!/bin/sh
# Runs every libFuzzer target for SECONDS each on a scratch copy of its
# seed corpus, and reports executions and findings.
# usage: tests/fuzz/run.sh BUILD_DIR SECONDS
set -u
build=$1 secs=$2
here=$(cd "$(dirname "$0")" && pwd)
status=0
for bin in "$build"/tests/fuzz_* "$build"/tests/aml/fuzz_*; do
  [ -x "$bin" ] || continue
  name=$(basename "$bin" | sed 's/^fuzz_//')
  work=$(mktemp -d)
  cp "$here/corpus/$name"/* "$work/" 2>/dev/null
  echo "== fuzz_$name for ${secs}s"
  if "$bin" -max_total_time="$secs" -print_final_stats=1 -max_len=65536 \
       -artifact_prefix="$build/fuzz-$name-" "$work" >"$build/fuzz-$name.log" 2>&1; then
    grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "$build/fuzz-$name.log"
  else
    echo "fuzz_$name FOUND A PROBLEM: see $build/fuzz-$name.log and $build/fuzz-$name-*"
    tail -n 30 "$build/fuzz-$name.log"
    status=1
  fi
  rm -rf "$work"
done
exit $status
