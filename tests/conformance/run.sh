#!/bin/sh
# Runs the official MCP conformance suite (pinned in package.json, on the
# Node 22 binary the lockfile pins too) against mcp-server-conformance over
# Streamable HTTP on loopback: the 2025-11-25 and 2026-07-28 requirement sets,
# whose pending scenarios json-schema-2020-12, server-sse-polling (2025-11-25),
# http-header-validation and http-custom-header-server-validation (2026-07-28,
# SEP-2243) must pass as well, and so must the ten scenarios of the tasks
# extension (io.modelcontextprotocol/tasks, 2026-07-28), which the suite
# leaves unscored. There is no expected-failures file. Only the other
# unscored scenarios may fail; they are reported, not counted.
# usage: run.sh SERVER_BINARY
set -u
here=$(cd "$(dirname "$0")" && pwd)
server=$1
. "$here/install.sh" || { echo "conformance: 0 passed, 1 failed"; exit 1; }

out=$(mktemp -d)
"$server" --http 127.0.0.1:0 >"$out/server.out" 2>"$out/server.err" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$out"' EXIT
url=""
for i in $(seq 1 100); do
  url=$(sed -n 's/^listening on //p' "$out/server.out")
  [ -n "$url" ] && break
  sleep 0.1
done
if [ -z "$url" ]; then
  echo "conformance: the server did not start"; cat "$out/server.err"
  echo "conformance: 0 passed, 1 failed"; exit 1
fi

passed=0 failed=0 status=0
for rev in 2025-11-25 2026-07-28; do
  "$node22" "$suite" server --url "$url" --requirements "$rev" >"$out/$rev.log" 2>&1
  rc=$?
  echo "== conformance --requirements $rev (exit $rc)"
  grep -E '^(✓|✗|Total:|Not scored|  [✓✗])' "$out/$rev.log"
  [ $rc -eq 0 ] || status=1
  # Count every scenario's checks except the ones this revision leaves
  # unscored; of those, the pending ones named above count too.
  counts=$(awk '
    /^Not scored/ { tail = 1; next }
    tail && /^  (✓|✗) / { unscored[$2] = 1; next }
    !tail && /^(✓|✗) / { n = $2; sub(/:$/, "", n); p[n] = $3; f[n] = $5 }
    END {
      for (n in p) {
        if ((n in unscored) && n != "json-schema-2020-12" && n != "server-sse-polling" &&
            n != "http-header-validation" && n != "http-custom-header-server-validation" &&
            n !~ /^tasks-/) continue
        tp += p[n]; tf += f[n]
      }
      printf "%d %d\n", tp, tf
    }' "$out/$rev.log")
  set -- $counts
  passed=$((passed + $1)); failed=$((failed + $2))
  # The pending scenarios must have run (and passed) for this revision.
  if [ "$rev" = 2025-11-25 ]; then
    pending="json-schema-2020-12 server-sse-polling"
  else
    pending="json-schema-2020-12 http-header-validation http-custom-header-server-validation
             tasks-lifecycle tasks-capability-negotiation tasks-wire-fields tasks-request-state-removal
             tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope tasks-status-notifications
             tasks-required-task-error tasks-mrtr-composition"
  fi
  for s in $pending; do
    grep -q "^✓ $s:" "$out/$rev.log" || { echo "missing or failing: $s"; failed=$((failed + 1)); }
  done
done
if grep -q 'Sanitizer\|runtime error:' "$out/server.err"; then
  echo "sanitizer report from the server:"; cat "$out/server.err"; failed=$((failed + 1))
fi
echo "conformance: $passed passed, $failed failed"
[ $failed -eq 0 ] && [ $status -eq 0 ]
