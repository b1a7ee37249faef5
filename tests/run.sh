#!/bin/sh
# Runs every CTest test of a build and prints the project's closing line:
# the sum of the per-file "NAME: N passed, N failed" counts, where a test
# that printed no count counts as one test (passed or failed by its exit).
# usage: tests/run.sh BUILD_DIR [ctest args...]
set -u
build=$1
shift
log="$build/Testing/Temporary/LastTest.log"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)" "$@"
rc=$?
if [ ! -f "$log" ]; then
  echo "0 passed, 1 failed"
  exit 1
fi
awk -v rc="$rc" '
  /^[0-9]+\/[0-9]+ Testing: / { counted = 0; f0 = f; next }
  /^[A-Za-z0-9_.-]+: [0-9]+ passed, [0-9]+ failed/ { p += $2; f += $4; counted = 1; next }
  /^Test Passed\./ { if (!counted) p++; next }
  /^Test Failed\./ { if (!counted || f == f0) f++; next }
  END {
    if (rc != 0 && f == 0) f = 1
    printf "%d passed, %d failed\n", p, f
    exit (f > 0 || rc != 0) ? 1 : 0
  }' "$log"
