#!/bin/sh
# Runs every CTest test of a build and prints the project's closing line.
# Each test program ends its output with "[NAME: ]N passed, N failed"; the
# last such line of each test is summed. A test that printed none counts as
# one test, passed or failed by its exit status; a test that printed counts
# but failed anyway (a crash or leak report after its summary) adds one
# failure. The third-party suites (JSONTestSuite, JSON-Schema-Test-Suite,
# the MCP conformance suite) are not summed: their totals are printed on
# their own lines before the closing line, where each counts as one test.
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
  # The third-party suites: their own totals are printed first; each counts
  # as one test of the project (passed or failed) in the closing line.
  function third(n) {
    if (n == "suite.JSONTestSuite") return "JSONTestSuite (parsing)"
    if (n == "suite.JSON-Schema-Test-Suite") return "JSON-Schema-Test-Suite (draft2020-12 and draft7, required)"
    if (n == "conformance.server") return "MCP conformance suite, server scenarios"
    if (n == "conformance.client") return "MCP conformance suite, client scenarios"
    return ""
  }
  function count(ok) {
    t = third(name)
    if (t != "") {
      if (have) thirds[++nt] = sprintf("%s: %d passed, %d failed", t, tp, tf)
      else thirds[++nt] = sprintf("%s: %s (no totals printed)", t, ok ? "passed" : "FAILED")
      if (ok && (!have || tf == 0)) p++; else f++
      return
    }
    if (have) { p += tp; f += tf; if (!ok && tf == 0) f++ } else if (ok) p++; else f++
  }
  /^[0-9]+\/[0-9]+ Testing: / { have = 0; name = $3; next }
  /^([^ ]+: )?[0-9]+ passed, [0-9]+ failed/ {
    line = $0; sub(/^[^ ]+: /, "", line); split(line, w, " ")
    tp = w[1] + 0; tf = w[3] + 0; have = 1; next
  }
  /^Test Passed\./ { count(1); next }
  /^Test Failed\./ { count(0); next }
  END {
    for (i = 1; i <= nt; i++) print thirds[i]
    if (rc != 0 && f == 0) f = 1
    printf "%d passed, %d failed\n", p, f
    exit (f > 0 || rc != 0) ? 1 : 0
  }' "$log"
