#!/bin/sh
# Requests per second through HAProxy, and what losing a server costs
# (issue 18, docs/deploy.md "Figures"). Everything runs on loopback in a
# temporary folder and is stopped on exit:
#   - a small generated bank (gen --seed 2 --customers 30 --days 60) in the
#     PostgreSQL database AML_TEST_DB names (run under tests/lib/pg.sh), or
#     in a SQLite file when it is unset;
#   - three `mcp-server-aml --http` servers on it;
#   - HAProxy with deploy/haproxy.cfg, changed as aml.suite.lb changes it
#     (ports, log, no chroot/user/stats socket) and with the per-client
#     request-rate limit lifted (2,000 requests per 10 s from one address:
#     the benchmark's one client would measure the limit, not the servers);
#   - wrk sending stateless 2026-07-28 tools/call POSTs of listCases
#     (read-only), each complete on its own.
# Three runs of SECONDS each with CONNECTIONS connections (2 wrk threads):
#   direct    to one server;
#   haproxy   through HAProxy to the three;
#   failover  through HAProxy, one server killed (SIGKILL) a third of the
#             way in: requests lost (non-2xx answers and socket errors),
#             the rate and the p99 latency of the run.
# Prints one line per run (calls/s, p50, p99, errors) with the load average
# and the CPU time the processes used: the machine may be shared, so read
# the figures with the load beside them.
#
#   sh tests/lib/pg.sh run sh bench/aml/lb.sh MCP_SERVER_AML [SECONDS] [CONNECTIONS]
# shellcheck disable=SC2154 # port1..3 and pid1..3 are set through eval
set -u
[ $# -ge 1 ] || { echo "usage: lb.sh MCP_SERVER_AML [SECONDS] [CONNECTIONS]" >&2; exit 2; }
aml=$1 secs=${2:-5} conns=${3:-8}
src=$(cd "$(dirname "$0")/../.." && pwd)
for tool in haproxy wrk curl; do
  command -v "$tool" >/dev/null 2>&1 || { echo "lb.sh needs $tool (Debian: apt-get install $tool)" >&2; exit 1; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/aml-lb-bench.XXXXXX") || exit 1
. "$src/tests/lib/aml_lb.sh"
pids=""
cleanup() {
  lb_stop
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
die() { echo "lb.sh: $*" >&2; exit 1; }

db=${AML_TEST_DB:-$work/bank.db}
"$aml" gen --seed 2 --customers 30 --days 60 --instances 1 --db "$db" >"$work/gen.log" 2>&1 ||
  { cat "$work/gen.log" >&2; die "gen failed"; }

lb_servers "$aml" "$db" "$work" bench || die "a server did not start"
lb_haproxy "$src" "$work" -e 's|sc_http_req_rate(0) gt 2000|sc_http_req_rate(0) gt 100000000|' ||
  die "haproxy did not start"
grep -q 'gt 100000000' "$work/haproxy.cfg" || die "deploy/haproxy.cfg has no request-rate limit to lift: update lb.sh"

# One stateless 2026-07-28 call (docs/http.md): the version in a header and in _meta, the routing headers.
body='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"listCases","arguments":{"status":"any","limit":5},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
cat >"$work/call.lua" <<EOF
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "listCases"
EOF
post() { # post URL: the answer's body
  curl -s --max-time 10 -X POST "$1" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2026-07-28' \
    -H 'Mcp-Method: tools/call' -H 'Mcp-Name: listCases' --data "$body"
}
post "http://127.0.0.1:$port1/mcp" | grep -q '"result"' || die "a direct call has no result: $(post "http://127.0.0.1:$port1/mcp")"
for _ in $(seq 1 50); do # until the health checks have taken all three servers in
  ok=0
  for _ in 1 2 3; do post "http://127.0.0.1:$lb/mcp" | grep -q '"result"' && ok=$((ok + 1)); done
  [ "$ok" -eq 3 ] && break
  sleep 0.2
done
[ "$ok" -eq 3 ] || die "calls through HAProxy fail: $(post "http://127.0.0.1:$lb/mcp")"
sleep 2

cpu_of() { # cpu_of PID...: the CPU seconds (user + system) of those processes so far
  for p in "$@"; do
    [ -r "/proc/$p/stat" ] && awk '{ print $14 + $15 }' "/proc/$p/stat"
  done | awk -v hz="$(getconf CLK_TCK)" '{ s += $1 } END { printf "%.1f", s / hz }'
}
# run NAME URL [KILL_PID]: wrk for $secs seconds; KILL_PID gets SIGKILL a third of the way in.
run() {
  name=$1 url=$2 victim=${3:-}
  alive=""
  for p in $pid1 $pid2 $pid3 $hp; do [ "$p" = "$victim" ] || alive="$alive $p"; done
  c0=$(cpu_of $alive)
  wrk -t 2 -c "$conns" -d "${secs}s" --latency -s "$work/call.lua" "$url" >"$work/$name.txt" 2>&1 &
  w=$!
  if [ -n "$victim" ]; then
    sleep "$(awk -v s="$secs" 'BEGIN { print s / 3 }')"
    kill -9 "$victim"
  fi
  wait "$w"
  c1=$(cpu_of $alive)
  awk -v name="$name" -v load="$(cut -d' ' -f1 /proc/loadavg)" -v cpu="$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.1f", b - a }')" '
    /Requests\/sec/ { rps = $2 }
    /^ +50%/ { p50 = $2 } /^ +99%/ { p99 = $2 }
    /requests in/ { n = $1 }
    /Non-2xx/ { bad = $NF }
    /Socket errors/ { gsub(/,/, ""); se = $4 + $6 + $8 + $10 }
    END { printf "%-9s %8.0f calls/s  p50 %-8s p99 %-8s %7d calls, %d non-2xx, %d socket errors  (load %s, CPU of the servers left and HAProxy %s s)\n",
                 name, rps, p50, p99, n, bad, se, load, cpu }' "$work/$name.txt"
}
echo "store: $db; $secs s per run, $conns connections, 2 wrk threads, $(nproc) cores"
run direct "http://127.0.0.1:$port1/mcp"
run haproxy "http://127.0.0.1:$lb/mcp"
run failover "http://127.0.0.1:$lb/mcp" "$pid2"
down=no
grep -q 'aml/aml2 is DOWN' "$work/haproxy.log" && down=yes
echo "failover: server 2 killed after $(awk -v s="$secs" 'BEGIN { print s / 3 }') s; HAProxy marked it DOWN: $down" \
  "(the socket errors are the calls lost with it; HAProxy sends a call again only when it could not connect)"
