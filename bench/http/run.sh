#!/bin/sh
# tools/call over Streamable HTTP, side by side in one run:
#   canned         bench_http_canned: libmicrohttpd answering every POST with
#                  a fixed result (id copied), no MCP at all: the lower bound
#   libmcp-pool    bench_http_server --pool: `echo` registered plainly, so
#                  every call hops to the worker pool and back: the default
#                  registration, and the headline
#   libmcp-inline  bench_http_server: libmcp, `echo` registered
#                  MCP_TOOL_NONBLOCKING, so it runs on the HTTP thread
#   auth-ALG       bench_http_server_auth --auth ALG --no-token-cache: libmcp as an
#                  OAuth resource server, each call's bearer JWT (ALG)
#                  verified with the cached key (stateless mode only);
#                  auth-cached: the verified-token cache on
#   pool-noacct    bench_http_server_noacct --pool: libmcp-pool built without
#                  what the HTTP transport counts per client and per byte
#                  (quotas, byte budgets, pool flows: MCP_BENCH_NO_ACCOUNTING),
#                  right after libmcp-pool in every round: the A/B of that
#                  accounting's cost per call
#   ts-sdk         bench/http/ts_server.mjs: the official TypeScript SDK
#                  (McpServer + StreamableHTTPServerTransport on node:http),
#                  same tool and schema, enableJsonResponse: true
# each in two modes:
#   stateful   legacy era: initialize (2025-11-25) once with curl, then every
#              POST carries Mcp-Session-Id (one session for all connections)
#   stateless  2026-07-28: no initialize; every POST carries _meta
#              protocolVersion + clientCapabilities and the headers
#              MCP-Protocol-Version, Mcp-Method, Mcp-Name. The TS SDK
#              (newest version 2025-11-25) gets the same bytes but
#              MCP-Protocol-Version: 2025-11-25 and runs its own stateless
#              mode (sessionIdGenerator: undefined).
# Every answer is one application/json body (the warm-up checks it).
#
# Load: wrk (Debian package), one thread, keep-alive, with
# bench/http/{stateful,stateless}.lua; 16 then 64 connections for DURATION
# seconds each, after a checked warm-up. Each server runs on 127.0.0.1 on a
# free port, fresh per round; the servers take turns, ROUNDS times, and each
# figure is the best the rounds saw (highest calls/s, lowest latency and CPU
# per call: other work on the machine only makes them worse); peak RSS is
# the highest seen. Server CPU is utime+stime from /proc/PID/stat around
# each window; peak RSS is VmHWM from /proc/PID/status at the end; RSS
# growth per call over the 64-connection window is reported when it
# exceeds 256 bytes (a leak makes the peak depend on the run length).
# "wrk CPU" is the load generator's own use of its one core: near 100%
# means the generator, not the server, set the pace.
#
# It builds nothing: `make bench` builds the programs first. The TS peer is
# installed here (npm ci --prefix bench/peers/ts-server) when missing.
# usage: sh bench/http/run.sh BUILD_DIR    (e.g. build/bench)
#   ROUNDS=N (default 3) and DURATION=S (default 2) change the run length;
#   ONLY=accounting runs libmcp-pool and pool-noacct alone (the A/B).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build/bench}
bin="$build/bench"
rounds=${ROUNDS:-3}
dur=${DURATION:-2}
only=${ONLY:-}
for p in bench_http_server bench_http_server_auth bench_http_server_noacct bench_http_canned; do
  if [ ! -x "$bin/$p" ]; then
    echo "run.sh: $bin/$p is missing; build it with make bench" >&2
    exit 1
  fi
done
for t in wrk curl; do
  if ! command -v "$t" >/dev/null 2>&1; then
    echo "run.sh: $t is not installed (apt-get install $t; make bench does it)" >&2
    exit 1
  fi
done

ts="$here/../peers/ts-server"
have_node=1
if ! command -v node >/dev/null 2>&1; then
  echo "run.sh: node is not installed: the TypeScript SDK rows are skipped" >&2
  have_node=0
elif [ ! -d "$ts/node_modules/@modelcontextprotocol/sdk" ]; then
  echo "run.sh: installing the TypeScript SDK peer (npm ci --prefix bench/peers/ts-server)" >&2
  npm ci --prefix "$ts" --no-audit --no-fund >&2
fi
ts_version=$(sed -n 's/.*"@modelcontextprotocol\/sdk": *"\([^"]*\)".*/\1/p' "$ts/package.json")

tmp=$(mktemp -d)
pid=""
cleanup() {
  if [ -n "$pid" ]; then
    kill -TERM "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
hz=$(getconf CLK_TCK)

# utime+stime (ticks) of a process: fields 14 and 15 of /proc/PID/stat,
# counted after the ")" that ends the command name.
cpu_ticks() {
  sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# Starts a server in the background ($pid) and waits for its "port N" line ($port).
start_server() {
  : >"$tmp/port"
  "$@" >"$tmp/port" 2>"$tmp/server.err" &
  pid=$!
  port=""
  tries=0
  while [ -z "$port" ]; do
    port=$(awk '/^port [0-9]+$/ { print $2 }' "$tmp/port")
    if [ -z "$port" ]; then
      if ! kill -0 "$pid" 2>/dev/null || [ "$tries" -ge 100 ]; then
        echo "run.sh: $* did not start:" >&2
        cat "$tmp/server.err" >&2
        exit 1
      fi
      sleep 0.1
      tries=$((tries + 1))
    fi
  done
}

stop_server() {
  kill -TERM "$pid"
  wait "$pid" || true
  pid=""
}

post() { # post FILE_FOR_HEADERS BODY [HEADER...]: POST to the server, body on stdout
  h=$1
  b=$2
  shift 2
  curl -sS -D "$h" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
    "$@" --data-binary "$b" "http://127.0.0.1:$port/mcp"
}

# Legacy era: initialize, then notifications/initialized; sets $session.
open_session() {
  post "$tmp/init.h" '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench-http","version":"1.0.0"}}}' >"$tmp/init.b"
  session=$(awk -F': *' 'tolower($1) == "mcp-session-id" { print $2 }' "$tmp/init.h" | tr -d '\r')
  if [ -z "$session" ]; then
    echo "run.sh: $1: initialize returned no Mcp-Session-Id:" >&2
    cat "$tmp/init.h" "$tmp/init.b" >&2
    exit 1
  fi
  post "$tmp/note.h" '{"jsonrpc":"2.0","method":"notifications/initialized"}' -H "Mcp-Session-Id: $session" \
    -H 'MCP-Protocol-Version: 2025-11-25' >/dev/null
}

# wrk under a shell that reports wrk's CPU (the shell's cutime+cstime once
# wrk is reaped) after wrk's own output.
run_wrk() { # run_wrk SCRIPT CONNS SECONDS
  sh -c '"$@" || exit 1; echo "lgstat $(sed "s/.*) //" /proc/$$/stat)"' sh \
    wrk -t1 -c"$2" -d"$3"s --timeout 10s -s "$here/$1" "http://127.0.0.1:$port/mcp"
}

# One server in one mode: start, open the session, checked warm-up, then a
# window at 16 and at 64 connections; appends "row" lines to $tmp/rows.
bench_one() { # bench_one LABEL MODE WARMUP_S COMMAND...
  label=$1
  mode=$2
  warm=$3
  shift 3
  start_server "$@"
  MCP_TOKEN=$(awk '/^token / { print $2 }' "$tmp/port")
  export MCP_SESSION_ID=none MCP_PROTOCOL MCP_TOKEN
  if [ "$mode" = stateful ] && [ "$label" != canned ]; then
    open_session "$label"
    MCP_SESSION_ID=$session
  fi
  MCP_CHECK=1 run_wrk "$mode.lua" 64 "$warm" >"$tmp/warm" || {
    echo "run.sh: $label $mode: wrk failed" >&2
    exit 1
  }
  set -- $(awk '/^result / { print $7, $8 }' "$tmp/warm")
  if [ "${1:-0}" -eq 0 ] || [ "$2" -ne 0 ]; then
    echo "run.sh: $label $mode: ${2:-?} of ${1:-0} warm-up answers were wrong (see above)" >&2
    bad=$((bad + ${2:-1}))
  fi
  for conns in 16 64; do
    c0=$(cpu_ticks "$pid")
    run_wrk "$mode.lua" "$conns" "$dur" >"$tmp/out"
    c1=$(cpu_ticks "$pid")
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status")
    awk -v l="$label" -v m="$mode" -v k="$conns" -v c="$((c1 - c0))" -v rss="$rss" '
      /^result / { r = $2; d = $3; p50 = $4; p99 = $5; e = $6 }
      /^lgstat / { lg = $15 + $16 }
      END { print "row", l, m, k, r, d, p50, p99, e, c, lg, rss }' "$tmp/out" >>"$tmp/rows"
  done
  echo "rss $label $mode $(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")" >>"$tmp/rows"
  stop_server
}

bad=0
: >"$tmp/rows"
round=1
while [ "$round" -le "$rounds" ]; do
  for mode in stateful stateless; do
    MCP_PROTOCOL=$([ "$mode" = stateful ] && echo 2025-11-25 || echo 2026-07-28)
    if [ "$only" = accounting ]; then
      bench_one libmcp-pool "$mode" 1 "$bin/bench_http_server" --pool
      bench_one pool-noacct "$mode" 1 "$bin/bench_http_server_noacct" --pool
      continue
    fi
    bench_one canned "$mode" 1 "$bin/bench_http_canned"
    bench_one libmcp-pool "$mode" 1 "$bin/bench_http_server" --pool
    bench_one pool-noacct "$mode" 1 "$bin/bench_http_server_noacct" --pool
    bench_one libmcp-inline "$mode" 1 "$bin/bench_http_server"
    if [ "$have_node" = 1 ]; then
      # The SDK's newest version; it answers 400 to 2026-07-28.
      MCP_PROTOCOL=2025-11-25
      # Longer warm-up: V8 compiles the hot paths first.
      bench_one ts-sdk "$mode" 3 node "$here/ts_server.mjs" "$mode"
    fi
  done
  if [ "$only" = accounting ]; then
    round=$((round + 1))
    continue
  fi
  # Authorized (stateless, bearer JWT with the echo tool's scope): every
  # signature checked with the cached key, per algorithm; and the verified-
  # token cache on (a client reusing its token).
  MCP_PROTOCOL=2026-07-28
  for alg in RS256 ES256 EdDSA; do
    bench_one "auth-$alg" stateless 1 "$bin/bench_http_server_auth" --auth "$alg" --no-token-cache
  done
  bench_one auth-cached stateless 1 "$bin/bench_http_server_auth" --auth ES256
  round=$((round + 1))
done

echo "bench/http: tools/call over Streamable HTTP on 127.0.0.1 (echo tool, input schema {text: string} validated),"
echo "  $(nproc) cores, wrk -t1 keep-alive, ${dur}s per window, best of $rounds rounds per figure;"
echo "  machine load at the end: $(uptime | sed 's/.*load average: //') (1/5/15 min; anything else running skews the figures)"
echo "  canned = lower bound (libmicrohttpd, fixed JSON answer, id copied); libmcp-pool = tool on the worker pool"
echo "  (default registration, the headline); libmcp-inline = tool MCP_TOOL_NONBLOCKING, runs on the HTTP thread;"
echo "  ts-sdk = @modelcontextprotocol/sdk $ts_version on Node $(node --version 2>/dev/null || echo '(missing)'), node:http, enableJsonResponse: true"
echo "  (all answers are application/json bodies: JSON-to-JSON). stateful = one legacy session (2025-11-25) shared by"
echo "  all connections; stateless = 2026-07-28 per-request _meta + headers (ts-sdk: its stateless mode, fresh"
echo "  McpServer + transport per request as the SDK requires). latency = wrk, request sent -> answer read;"
echo "  CPU = server process (all threads) per call; wrk CPU = load generator, % of its one core"
echo
awk -v hz="$hz" -v bad="$bad" '
  # Each figure is the best the rounds saw: highest calls/s, lowest
  # latency and CPU per call (other work on the machine only ever makes
  # them worse). Peak RSS is the highest seen.
  /^row / {
    key = $2 " " $3 " " $4
    cps = $6 > 0 ? $5 * 1e6 / $6 : 0
    cpu = $5 > 0 ? $10 / hz * 1e6 / $5 : 0
    lg = $6 > 0 ? 100 * $11 / hz / ($6 / 1e6) : 0
    if (!(key in seen)) {
      seen[key] = 1; order[n++] = key
      C[key] = cps; P50[key] = $7; P99[key] = $8; CPU[key] = cpu; LG[key] = lg
    }
    if (cps > C[key]) { C[key] = cps; LG[key] = lg }
    if ($7 < P50[key]) P50[key] = $7
    if ($8 < P99[key]) P99[key] = $8
    if (cpu < CPU[key]) CPU[key] = cpu
    E[key] += $9
    # RSS growth over the 64-connection window, per call (a leak shows here).
    sm = $2 " " $3
    if ($4 == 16) rss16[sm] = $12
    else if ($4 == 64 && rss16[sm] > 0 && $5 > 0) {
      g = ($12 - rss16[sm]) * 1024 / $5
      if (!(sm in grow) || g > grow[sm]) grow[sm] = g
    }
  }
  /^rss / { k = $2 " " $3; if ($4 > rss[k]) rss[k] = $4 }
  END {
    printf "%-14s %-9s %4s %9s %8s %8s %12s %8s %12s %7s\n", "server", "mode", "conn", "calls/s", "p50 us", "p99 us",
           "CPU us/call", "wrk CPU", "peak RSS MB", "errors"
    for (i = 0; i < n; i++) {
      key = order[i]
      split(key, f, " ")
      printf "%-14s %-9s %4d %9.0f %8.0f %8.0f %12.2f %7.0f%% %12.1f %7d\n", f[1], f[2], f[3], C[key], P50[key], P99[key],
             CPU[key], LG[key], rss[f[1] " " f[2]] / 1024, E[key]
      errs += E[key]
    }
    split("stateful stateless", modes, " ")
    split("16 64", ks, " ")
    split("libmcp-pool libmcp-inline", libs, " ")
    printf "\nratios and targets, from this run (libmcp-pool, the default registration, is the headline;\n"
    printf "libmcp-inline, a tool flagged MCP_TOOL_NONBLOCKING, for comparison)\n"
    for (li = 1; li <= 2; li++) {
      l = libs[li]
      for (mi = 1; mi <= 2; mi++) for (ki = 1; ki <= 2; ki++) {
        m = modes[mi]; k = ks[ki]; a = l " " m " " k; t = "ts-sdk " m " " k
        if (CPU[t] > 0 && CPU[a] > 0) {
          r = CPU[t] / CPU[a]; ok = r >= 25; met[l] += ok; total[l]++
          printf "  ts-sdk / %-13s CPU per call %-9s %2d conn: %5.1fx (target >= 25x:  %s)\n", l, m, k, r, ok ? "met" : "NOT met"
        }
        if (C[t] > 0 && C[a] > 0)
          printf "  %-13s / ts-sdk  calls/s  %-9s %2d conn: %7.1fx\n", l, m, k, C[a] / C[t]
      }
      for (mi = 1; mi <= 2; mi++) for (ki = 1; ki <= 2; ki++) {
        m = modes[mi]; k = ks[ki]; a = l " " m " " k; c = "canned " m " " k
        if (C[c] > 0 && C[a] > 0) {
          r = 100 * C[a] / C[c]; ok = r >= 60; met[l] += ok; total[l]++
          printf "  %-13s / canned  calls/s  %-9s %2d conn: %7.0f%%   (target >= 60%%:  %s)\n", l, m, k, r, ok ? "met" : "NOT met"
        }
      }
      for (mi = 1; mi <= 2; mi++) for (ki = 1; ki <= 2; ki++) {
        m = modes[mi]; k = ks[ki]; a = l " " m " " k; c = "canned " m " " k
        if (P99[c] > 0 && P99[a] > 0) {
          r = P99[a] / P99[c]; ok = r <= 1.5; met[l] += ok; total[l]++
          printf "  %-13s / canned  p99      %-9s %2d conn: %7.2fx   (target <= 1.5x: %s)\n", l, m, k, r, ok ? "met" : "NOT met"
        }
      }
      for (mi = 1; mi <= 2; mi++) {
        m = modes[mi]
        if (rss["ts-sdk " m] > 0 && rss[l " " m] > 0) {
          r = rss["ts-sdk " m] / rss[l " " m]; ok = r >= 20; met[l] += ok; total[l]++
          printf "  ts-sdk / %-13s peak RSS %-9s        : %7.1fx   (target >= 20x:  %s)\n", l, m, r, ok ? "met" : "NOT met"
        }
      }
      if (l == "libmcp-pool") for (mi = 1; mi <= 2; mi++) {
        m = modes[mi]
        if (rss[l " " m] > 0) {
          r = rss[l " " m] / 1024; ok = r <= 8.6; met[l] += ok; total[l]++
          printf "  %-13s peak RSS %-9s           : %5.1f MB (target <= 8.6 MB: %s)\n", l, m, r, ok ? "met" : "NOT met"
        }
      }
      for (ki = 1; ki <= 2; ki++) {
        k = ks[ki]; a = l " stateful " k; b = l " stateless " k
        if (C[a] > 0 && C[b] > 0) {
          r = 100 * C[a] / C[b]; ok = r >= 80; met[l] += ok; total[l]++
          printf "  %-13s legacy session / stateless calls/s %2d conn: %5.0f%% (target >= 80%%: %s)\n", l, k, r, ok ? "met" : "NOT met"
        }
      }
      printf "  -> %s: %d of %d targets met\n", l, met[l], total[l]
    }
    for (mi = 1; mi <= 2; mi++) for (ki = 1; ki <= 2; ki++) {
      m = modes[mi]; k = ks[ki]; a = "libmcp-pool " m " " k; b = "libmcp-inline " m " " k
      if (CPU[a] > 0 && CPU[b] > 0)
        printf "  libmcp-pool / libmcp-inline CPU per call %-9s %2d conn: %.2fx (the hand-off to a worker and back)\n", m, k,
               CPU[a] / CPU[b]
    }
    printf "\naccounting per client and per byte (quotas, byte budgets, pool flows): libmcp-pool against the\n"
    printf "same server built without it (pool-noacct), server CPU per call (target: at most 5%% more)\n"
    for (mi = 1; mi <= 2; mi++) for (ki = 1; ki <= 2; ki++) {
      m = modes[mi]; k = ks[ki]; a = "libmcp-pool " m " " k; b = "pool-noacct " m " " k
      if (CPU[a] > 0 && CPU[b] > 0) {
        r = 100 * (CPU[a] - CPU[b]) / CPU[b]
        printf "  %-9s %2d conn: %6.2f vs %6.2f us/call: %+5.1f%% (%s)\n", m, k, CPU[a], CPU[b], r, r <= 5 ? "met" : "NOT met"
      }
    }
    printf "\nauthorization: server CPU per call over libmcp-inline stateless at the same connection count\n"
    printf "  (auth-ALG = the JWT signature verified on every call with the cached key; auth-cached = the\n"
    printf "  verified-token cache on, as for a client reusing its token; target < 20 us with a cached key)\n"
    split("auth-RS256 auth-ES256 auth-EdDSA auth-cached", auths, " ")
    for (ai = 1; ai <= 4; ai++) for (ki = 1; ki <= 2; ki++) {
      k = ks[ki]; a = auths[ai] " stateless " k; b = "libmcp-inline stateless " k
      if (CPU[a] > 0 && CPU[b] > 0)
        printf "  %-12s %2d conn: %6.1f us/call more (%.0f calls/s)\n", auths[ai], k, CPU[a] - CPU[b], C[a]
    }
    printf "\nfor scale: the lower bound against the TS SDK (about the most any server on libmicrohttpd can show here)\n"
    for (mi = 1; mi <= 2; mi++) for (ki = 1; ki <= 2; ki++) {
      m = modes[mi]; k = ks[ki]; c = "canned " m " " k; t = "ts-sdk " m " " k
      if (C[t] > 0 && C[c] > 0)
        printf "  canned        / ts-sdk  calls/s  %-9s %2d conn: %7.1fx\n", m, k, C[c] / C[t]
    }
    for (sm in grow) if (grow[sm] >= 256) {
      split(sm, f, " ")
      printf "\nnote: %s %s: RSS grew %.1f KB per call over the 64-connection window (heap growth or a leak:\n  its peak RSS depends on how long it runs).", f[1], f[2], grow[sm] / 1024
      if (f[1] == "ts-sdk" && f[2] == "stateful")
        printf "\n  (a known SDK 1.x bug: with enableJsonResponse a session keeps one _streamMapping entry per POST,\n   modelcontextprotocol/typescript-sdk#2559; its stateless mode discards the transport per request)"
      printf "\n"
    }
    if (errs) printf "\nWARNING: %d requests failed (connect/read/write/timeout or a non-2xx status)\n", errs
    if (bad) printf "\nWARNING: %d warm-up answers were wrong; see the messages above\n", bad
  }' "$tmp/rows"
