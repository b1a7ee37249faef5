#!/bin/sh
# tools/call over stdio, side by side in one run:
#   canned         bench_stdio_canned: answers each line with a fixed result
#                  (copies the id, parses nothing): the lower bound
#   libmcp-pool    bench_stdio_server: libmcp, `echo` registered plainly, so
#                  every call hops to the worker pool (2 workers here: one
#                  per core): the default registration, and the headline
#   libmcp-inline  bench_stdio_server --inline: libmcp, `echo` registered
#                  MCP_TOOL_NONBLOCKING, so it runs on the stdio I/O thread
#   ts-sdk         bench/peers/ts-server/server.mjs: the official TypeScript
#                  SDK (McpServer + StdioServerTransport), same tool and schema
# Each is driven by bench_stdio_loadgen (C): initialize 2025-11-25, a
# warm-up, then N tools/call with K = 1 and K = 64 in flight. The servers
# run one after the other, ROUNDS times interleaved (so a busy moment hits
# all of them alike); each figure is the best the rounds saw (highest
# calls/s, lowest latency and CPU per call), peak RSS is the highest seen.
# Then the ratios, computed from this run, against their targets.
#
# It builds nothing: `make bench` builds the programs first. The TS peer is
# installed here (npm ci --prefix bench/peers/ts-server) when its
# node_modules is missing.
# usage: sh bench/stdio/run.sh BUILD_DIR    (e.g. build/bench)
#   ROUNDS=N in the environment changes the number of rounds (default 5).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build/bench}
bin="$build/bench"
rounds=${ROUNDS:-5}
for p in bench_stdio_loadgen bench_stdio_server bench_stdio_canned; do
  if [ ! -x "$bin/$p" ]; then
    echo "run.sh: $bin/$p is missing; build it with make bench" >&2
    exit 1
  fi
done

ts="$here/../peers/ts-server"
have_node=1
if ! command -v node >/dev/null 2>&1; then
  echo "run.sh: node is not installed: the TypeScript SDK row is skipped" >&2
  have_node=0
elif [ ! -d "$ts/node_modules" ]; then
  echo "run.sh: installing the TypeScript SDK peer (npm ci --prefix bench/peers/ts-server)" >&2
  npm ci --prefix "$ts" --no-audit --no-fund >&2
fi
ts_version=$(sed -n 's/.*"@modelcontextprotocol\/sdk": *"\([^"]*\)".*/\1/p' "$ts/package.json")

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
lg="$bin/bench_stdio_loadgen"
# Calls per window: enough for a stable figure, bounded by a time cap, so
# that the whole run stays well under two minutes.
c_windows="1:20000,64:300000"
ts_windows="1:5000,64:20000"
i=1
while [ "$i" -le "$rounds" ]; do
  "$lg" --label canned --warmup 2000 --windows "$c_windows" --time-cap 5 -- "$bin/bench_stdio_canned" >>"$tmp/rows"
  "$lg" --label libmcp-pool --warmup 2000 --windows "$c_windows" --time-cap 5 -- "$bin/bench_stdio_server" >>"$tmp/rows"
  "$lg" --label libmcp-inline --warmup 2000 --windows "$c_windows" --time-cap 5 -- "$bin/bench_stdio_server" --inline >>"$tmp/rows"
  if [ "$have_node" = 1 ]; then
    # More warm-up: V8 compiles the hot paths first.
    "$lg" --label ts-sdk --warmup 5000 --windows "$ts_windows" --time-cap 5 -- node "$ts/server.mjs" >>"$tmp/rows"
  fi
  i=$((i + 1))
done

echo "bench/stdio: tools/call over stdio (echo tool, input schema {text: string} validated), $(nproc) cores, best of $rounds rounds"
echo "  canned = lower bound (fixed answer, id copied); libmcp-pool = tool on the worker pool (default registration, the"
echo "  headline); libmcp-inline = tool MCP_TOOL_NONBLOCKING, runs on the I/O thread; ts-sdk = @modelcontextprotocol/sdk $ts_version on Node $(node --version 2>/dev/null || echo '(missing)')"
echo "  latency: request written -> answer read, by the load generator; CPU: the server process (all threads) per call"
echo
awk -v rounds="$rounds" '
  # Each figure is the best the rounds saw: highest calls/s, lowest latency
  # and CPU per call (other work on the machine only makes them worse).
  # Peak RSS is the highest seen.
  /^row / {
    key = $2 " " $3
    if (!(key in seen)) {
      seen[key] = 1; order[n++] = key
      C[key] = $6; P50[key] = $7; P99[key] = $8; CPU[key] = $9; N[key] = $4
    }
    if ($6 > C[key]) C[key] = $6
    if ($7 < P50[key]) P50[key] = $7
    if ($8 < P99[key]) P99[key] = $8
    if ($9 < CPU[key]) CPU[key] = $9
    if ($10 > rss[$2]) rss[$2] = $10
    errs[key] += $11
  }
  END {
    printf "%-14s %3s %7s %11s %9s %9s %13s %13s %7s\n", "server", "K", "calls", "calls/s", "p50 us", "p99 us",
           "CPU us/call", "peak RSS MB", "errors"
    for (i = 0; i < n; i++) {
      k = order[i]
      split(k, f, " ")
      printf "%-14s %3d %7d %11.0f %9.1f %9.1f %13.2f %13.1f %7d\n", f[1], f[2], N[k], C[k], P50[k], P99[k], CPU[k],
             rss[f[1]], errs[k]
    }
    printf "\nratios and targets (libmcp-pool, the default registration, is the headline; libmcp-inline for information)\n"
    split("libmcp-pool libmcp-inline", libs, " ")
    for (j = 1; j <= 2; j++) {
      l = libs[j]
      if (!((l " 64") in CPU)) continue
      if (j == 1) {
        c = CPU[l " 64"]
        printf "  %-14s server CPU per call at K=64:  %7.2f us  (target <= 2 us: %s)\n", l, c, (c <= 2 ? "met" : "NOT met")
      }
      if (CPU["ts-sdk 64"] > 0 && CPU[l " 64"] > 0) {
        r = CPU["ts-sdk 64"] / CPU[l " 64"]
        printf "  ts-sdk / %-14s CPU per call at K=64: %7.1fx  (target >= 20x: %s)\n", l, r, (r >= 20 ? "met" : "NOT met")
      }
      if (C["ts-sdk 64"] > 0)
        printf "  %-14s / ts-sdk   calls/s at K=64:     %7.1fx\n", l, C[l " 64"] / C["ts-sdk 64"]
      if (rss[l] > 0 && rss["ts-sdk"] > 0) {
        r = rss["ts-sdk"] / rss[l]
        printf "  ts-sdk / %-14s peak RSS:             %7.1fx  (target >= 30x: %s)\n", l, r, (r >= 30 ? "met" : "NOT met")
      }
      split("64 1", ks, " ")
      for (q = 1; q <= 2; q++) {
        k = ks[q]
        if (C["canned " k] > 0 && ((l " " k) in C))
          printf "  %-14s / canned   calls/s at K=%-2d:     %6.0f%%\n", l, k, 100 * C[l " " k] / C["canned " k]
      }
    }
    if (CPU["libmcp-inline 64"] > 0 && CPU["libmcp-pool 64"] > 0)
      printf "  libmcp-pool / libmcp-inline CPU per call at K=64: %.2fx (the cost of the hand-off to a worker)\n",
             CPU["libmcp-pool 64"] / CPU["libmcp-inline 64"]
    e = 0
    for (key in errs) e += errs[key]
    if (e) printf "\nWARNING: %d answers were errors or missing; see the messages above\n", e
  }' "$tmp/rows"
