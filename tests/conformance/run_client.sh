#!/bin/sh
# Runs the official MCP conformance suite's client scenarios against
# mcp-client-conformance: every client scenario the 2025-11-25 and
# 2026-07-28 requirement sets list (plus the client scenarios they run
# unscored), each at its revision's wire, one at a time with --scenario, so
# that a warning or a non-zero exit fails it too. That includes every
# authorization scenario (auth/*) the requirement sets list, and of the
# unscored extension scenarios the one libmcp implements
# (auth/client-credentials-basic); the other extensions (client credentials
# with a JWT assertion, DPoP, enterprise-managed and workload identity
# authorization) are not implemented and not run.
# There is no expected-failures file.
# usage: run_client.sh CLIENT_BINARY
set -u
here=$(cd "$(dirname "$0")" && pwd)
client=$1
. "$here/install.sh" || { echo "conformance-client: 0 passed, 1 failed"; exit 1; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
passed=0 failed=0
for rev in 2025-11-25 2026-07-28; do
  # "  - name" lines of the client section, and "- name [client]" among the
  # unscored ones except the extensions, plus the one extension libmcp has.
  names=$("$node22" "$suite" list --client --requirements "$rev" | awk '
    /^Client scenarios/ { on = 1; next }
    /^[A-Z]/ && !/^Client/ { on = 0 }
    on && /^  - / { print $2 }
    /^  [a-z-]+ \([0-9]+\):$/ { ext = ($1 == "extension") }
    !ext && /^    - .* \[client\]$/ { print $2 }
    ext && /^    - auth\/client-credentials-basic \[client\]$/ { print $2 }')
  for s in $names; do
    log="$out/$(echo "$rev-$s" | tr / _).log"
    "$node22" "$suite" client --command "$client" --scenario "$s" --spec-version "$rev" --force >"$log" 2>&1
    rc=$?
    line=$(grep -E '^Passed: [0-9]+/[0-9]+' "$log" | tail -1)
    p=$(echo "$line" | sed -n 's/^Passed: \([0-9]*\)\/\([0-9]*\).*/\1/p')
    t=$(echo "$line" | sed -n 's/^Passed: \([0-9]*\)\/\([0-9]*\).*/\2/p')
    if [ $rc -eq 0 ] && grep -q 'OVERALL: PASSED' "$log" && [ -n "$p" ]; then
      echo "ok $rev $s ($line)"
      passed=$((passed + p)); failed=$((failed + t - p))
    else
      echo "FAIL $rev $s (exit $rc; ${line:-no result})"
      grep -E '✗|WARNING|Error' "$log" | head -20
      passed=$((passed + ${p:-0})); failed=$((failed + ${t:-1} - ${p:-0}))
      [ "${t:-1}" = "${p:-0}" ] && failed=$((failed + 1))
    fi
  done
done
echo "conformance-client: $passed passed, $failed failed"
[ $failed -eq 0 ]
