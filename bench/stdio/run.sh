#!/bin/sh
# tools/call over stdio, side by side in one run:
#   canned         bench_stdio_canned: answers each line with a fixed result
#                  (copies the id, parses nothing): the lower bound
#   libmcp-inline  bench_stdio_server --inline: libmcp, `echo` registered
#                  MCP_TOOL_NONBLOCKING, so it runs on the stdio I/O thread
#   libmcp-pool    bench_stdio_server: libmcp, `echo` registered plainly, so
#                  every call hops to the worker pool (2 workers here: one
#                  per core), the default for tools that may block
#   ts-sdk         bench/peers/ts-server/server.mjs: the official TypeScript
#                  SDK (McpServer + StdioServerTransport), same tool and schema
# Each is driven by bench_stdio_loadgen (C): initialize 2025-11-25, a
# warm-up, then N tools/call with K = 1 and K = 64 in flight. The servers
# run one after the other, ROUNDS times interleaved (so a busy moment hits
# all of them alike); each row shows the round with the best calls/s, peak
# RSS is the highest seen. Then the ratios against their targets.
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
  "$lg" --label libmcp-inline --warmup 2000 --windows "$c_windows" --time-cap 5 -- "$bin/bench_stdio_server" --inline >>"$tmp/rows"
  "$lg" --label libmcp-pool --warmup 2000 --windows "$c_windows" --time-cap 5 -- "$bin/bench_stdio_server" >>"$tmp/rows"
  if [ "$have_node" = 1 ]; then
    # More warm-up: V8 compiles the hot paths first.
    "$lg" --label ts-sdk --warmup 5000 --windows "$ts_windows" --time-cap 5 -- node "$ts/server.mjs" >>"$tmp/rows"
  fi
  i=$((i + 1))
done

echo "bench/stdio: tools/call over stdio (echo tool, input schema {text: string} validated), $(nproc) cores, best of $rounds rounds"
echo "  canned = lower bound (fixed answer, id copied); libmcp-inline = tool MCP_TOOL_NONBLOCKING, runs on the I/O thread;"
echo "  libmcp-pool = tool on the worker pool (default registration); ts-sdk = @modelcontextprotocol/sdk $ts_version on Node $(node --version 2>/dev/null || echo '(missing)')"
echo "  latency: request written -> answer read, by the load generator; CPU: the server process (all threads) per call"
echo
awk -v rounds="$rounds" '
  /^row / {
    key = $2 " " $3
    if (!(key in best) || $6 > best[key]) { best[key] = $6; line[key] = $0 }
    if (!(key in seen)) { seen[key] = 1; order[n++] = key }
    if ($10 > rss[$2]) rss[$2] = $10
    errs[key] += $11
  }
  END {
    printf "%-14s %3s %7s %11s %9s %9s %13s %13s %7s\n", "server", "K", "calls", "calls/s", "p50 us", "p99 us",
           "CPU us/call", "peak RSS MB", "errors"
    for (i = 0; i < n; i++) {
      split(line[order[i]], f, " ")
      printf "%-14s %3d %7d %11.0f %9.1f %9.1f %13.2f %13.1f %7d\n", f[2], f[3], f[4], f[6], f[7], f[8], f[9],
             rss[f[2]], errs[order[i]]
      cps[f[2], f[3]] = f[6]
    }
    printf "\nratios and targets\n"
    ts64 = cps["ts-sdk", 64]
    split("libmcp-inline libmcp-pool", libs, " ")
    for (j = 1; j <= 2; j++) {
      l = libs[j]
      if (!((l, 64) in cps)) continue
      if (ts64 > 0) {
        r = cps[l, 64] / ts64
        printf "  %-14s / ts-sdk   calls/s at K=64: %8.1fx  (target >= 20x: %s)\n", l, r, (r >= 20 ? "met" : "NOT met")
      } else {
        printf "  %-14s / ts-sdk   calls/s at K=64: n/a (no ts-sdk row)\n", l
      }
    }
    for (j = 1; j <= 2; j++) {
      l = libs[j]
      if (rss[l] > 0 && rss["ts-sdk"] > 0) {
        r = rss["ts-sdk"] / rss[l]
        printf "  ts-sdk / %-14s peak RSS:        %8.1fx  (target >= 30x: %s)\n", l, r, (r >= 30 ? "met" : "NOT met")
      }
    }
    split("64 1", ks, " ")
    for (j = 1; j <= 2; j++) {
      l = libs[j]
      for (q = 1; q <= 2; q++) {
        k = ks[q]
        if (cps["canned", k] > 0 && ((l, k) in cps)) {
          r = 100 * cps[l, k] / cps["canned", k]
          printf "  %-14s / canned   calls/s at K=%-2d: %7.0f%%  (target >= 50%%: %s)\n", l, k, r,
                 (r >= 50 ? "met" : "NOT met")
        }
      }
    }
    e = 0
    for (key in errs) e += errs[key]
    if (e) printf "\nWARNING: %d answers were errors or missing; see the messages above\n", e
  }' "$tmp/rows"
