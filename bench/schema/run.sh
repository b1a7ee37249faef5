#!/bin/sh
# JSON Schema validation benchmark: runs bench_schema (libmcp) and then
# peer.mjs (ajv 8 in 2020-12 mode, @cfworker/json-schema) on the same cases
# in bench/schema/cases/, and prints one table with the libmcp/ajv and
# libmcp/cfworker ratios of validations per second (above 1: libmcp is
# faster). The two run one after the other, ROUNDS times interleaved (so a
# busy moment hits both alike); each figure is the best round.
# It builds nothing: `make bench` builds bench_schema and installs the peers
# (npm ci --prefix bench/peers) first.
# usage: sh bench/schema/run.sh BUILD_DIR    (e.g. build/bench)
#   ROUNDS=N in the environment changes the number of rounds (default 3).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build/bench}
bin="$build/bench/bench_schema"
if [ ! -x "$bin" ]; then
  echo "run.sh: $bin is missing; build it with make bench" >&2
  exit 1
fi
if [ ! -d "$here/../peers/node_modules" ]; then
  echo "run.sh: the peers are not installed; run npm ci --prefix bench/peers" >&2
  exit 1
fi

rounds=${ROUNDS:-3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/libmcp.txt"
: >"$tmp/peers.txt"
i=0
while [ "$i" -lt "$rounds" ]; do
  "$bin" "$here/cases" >>"$tmp/libmcp.txt"
  node "$here/peer.mjs" "$here/cases" >>"$tmp/peers.txt"
  i=$((i + 1))
done

echo "bench/schema: JSON Schema validations per second (schema compiled and instance parsed beforehand)"
grep -h -E '^# (bench_schema|peer\.mjs):' "$tmp/libmcp.txt" "$tmp/peers.txt" | sort -u | sed 's/^# /  /'
echo "  best of $rounds interleaved runs; check = stop at the first violation; full = report every violation"
echo "  (a) tool: typical tool input schema; (b) composed: \$ref + allOf + oneOf + unevaluatedProperties, 20 transactions"
echo
cat "$tmp/libmcp.txt" "$tmp/peers.txt" | awk '
  /^#/ { next }
  NF == 6 {
    key = $2 " " $3 " " $4
    if (!(key in seen)) { seen[key] = 1; order[n++] = key }
    if ($5 + 0 > ops[$1, key] + 0) ops[$1, key] = $5
    errs[$1, key] = $6
  }
  END {
    printf "%-12s %-8s %-6s %13s %13s %13s %11s %16s  %s\n", "case", "instance", "mode",
           "libmcp/s", "ajv/s", "cfworker/s", "libmcp/ajv", "libmcp/cfworker", "violations (libmcp ajv cfworker)"
    minr = 1e30
    for (i = 0; i < n; i++) {
      split(order[i], k, " ")
      m = ops["libmcp", order[i]]; a = ops["ajv", order[i]]; c = ops["cfworker", order[i]]
      ra = a > 0 ? m / a : 0; rc = c > 0 ? m / c : 0
      label = k[1] == "tool" ? "(a) tool" : k[1] == "composed" ? "(b) composed" : k[1]
      printf "%-12s %-8s %-6s %13.0f %13.0f %13.0f %10.2fx %15.2fx  %s %s %s\n", label, k[2], k[3],
             m, a, c, ra, rc, errs["libmcp", order[i]], errs["ajv", order[i]], errs["cfworker", order[i]]
      if (ra < minr) { minr = ra; minkey = label " " k[2] " " k[3] }
    }
    printf "\nslowest libmcp/ajv ratio: %.2fx (%s); target: above 1x everywhere\n", minr, minkey
  }'
