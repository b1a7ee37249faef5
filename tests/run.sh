#!/bin/sh
# Runs every CTest test of a build and prints the project's closing line.
# Each test program ends its output with "[NAME: ]N passed, N failed"; the
# last such line of each test is summed. A test that printed none counts as
# one test, passed or failed by its exit status; a test that printed counts
# but failed anyway (a crash or leak report after its summary) adds one
# failure.
# usage: tests/run.sh BUILD_DIR [ctest args...]
set -u
build=$1
shift
log="$build/Testing/Temporary/LastTest.log"
rm -f "$log"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "$@"
rc=$?
if [ ! -f "$log" ]; then
  echo "0 passed, 1 failed"
  exit 1
fi
awk -v rc="$rc" '
  /^[0-9]+\/[0-9]+ Testing: / { have = 0; next }
  /^([^ ]+: )?[0-9]+ passed, [0-9]+ failed/ {
    line = $0; sub(/^[^ ]+: /, "", line); split(line, w, " ")
    tp = w[1] + 0; tf = w[3] + 0; have = 1; next
  }
  /^Test Passed\./ { if (have) { p += tp; f += tf } else p++; next }
  /^Test Failed\./ { if (have) { p += tp; f += tf; if (tf == 0) f++ } else f++; next }
  END {
    if (rc != 0 && f == 0) f = 1
    printf "%d passed, %d failed\n", p, f
    exit (f > 0 || rc != 0) ? 1 : 0
  }' "$log"
