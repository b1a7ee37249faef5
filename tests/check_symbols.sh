#!/bin/sh
# Checks that a shared library exports exactly the public API: every
# function declared with MCP_API in the public headers is exported, and
# nothing else is (apart from the linker's own _init, _fini, _edata, _end,
# __bss_start and the symbol-version nodes). When the library's symbols are
# versioned (src/libmcp.map), every public one must carry a version.
# Names every difference.
# usage: check_symbols.sh LIBRARY [HEADER_DIR]   (default: include/mcp next to tests/)
set -eu
export LC_ALL=C
lib=$1
inc=${2:-$(dirname "$0")/../include/mcp}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); }

# Declared: every declaration starts a line with "MCP_API "; the function's
# name is the identifier before the first '('. A line that mentions MCP_API
# outside a comment or directive in any other way is reported, so that no
# declaration escapes the comparison.
grep -h 'MCP_API' "$inc"/*.h | grep -v -E '^[[:space:]]*(#|/\*|\*)' >"$tmp/lines" || true
grep -v -E '^MCP_API [^(]*[A-Za-z_][A-Za-z0-9_]*\(' "$tmp/lines" >"$tmp/odd" || true
if [ -s "$tmp/odd" ]; then
  echo "MCP_API lines this check cannot read (the declaration must start the line and name a function):"
  sed 's/^/  /' "$tmp/odd"
  bad
fi
sed -n 's/^MCP_API [^(]*[^A-Za-z0-9_(]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' "$tmp/lines" | sort -u >"$tmp/declared"
ndecl=$(wc -l <"$tmp/declared")
if [ "$ndecl" -lt 10 ]; then
  echo "only $ndecl MCP_API functions found in $inc"
  bad
fi

# Exported: the defined dynamic symbols, as NAME or NAME@VERSION / NAME@@VERSION.
nm -D --defined-only "$lib" >"$tmp/nm"
awk 'NF >= 3 { print $2, $3 }' "$tmp/nm" >"$tmp/typed"
# Version nodes show up as absolute symbols named after themselves.
awk '$1 == "A" { n = $2; sub(/@.*/, "", n); print n }' "$tmp/typed" | sort -u >"$tmp/nodes"
awk '{ print $2 }' "$tmp/typed" >"$tmp/raw"
sed 's/@.*//' "$tmp/raw" | sort -u >"$tmp/all"
grep -v -x -E '_init|_fini|_edata|_end|__bss_start' "$tmp/all" | grep -v -x -F -f "$tmp/nodes" >"$tmp/exported" || true

comm -23 "$tmp/declared" "$tmp/exported" >"$tmp/missing"
comm -13 "$tmp/declared" "$tmp/exported" >"$tmp/extra"
if [ -s "$tmp/missing" ]; then
  echo "declared with MCP_API in $inc but not exported by $(basename "$lib"):"
  sed 's/^/  /' "$tmp/missing"
  bad
else
  ok
fi
if [ -s "$tmp/extra" ]; then
  echo "exported by $(basename "$lib") but not declared with MCP_API in $inc:"
  sed 's/^/  /' "$tmp/extra"
  bad
else
  ok
fi

# Versions: with version nodes, every exported public symbol has one (@@: the default).
if [ -s "$tmp/nodes" ]; then
  awk -F'@@' 'NF < 2 { print $1 }' "$tmp/raw" | grep -x -F -f "$tmp/declared" >"$tmp/unversioned" || true
  if [ -s "$tmp/unversioned" ]; then
    echo "exported without a symbol version (nodes: $(tr '\n' ' ' <"$tmp/nodes")):"
    sed 's/^/  /' "$tmp/unversioned"
    bad
  else
    ok
  fi
  versions=" under $(tr '\n' ' ' <"$tmp/nodes" | sed 's/ $//')"
else
  versions=" (unversioned)"
fi

nexp=$(wc -l <"$tmp/exported")
if [ "$failed" -eq 0 ]; then
  echo "$nexp functions exported$versions: exactly the $ndecl MCP_API functions of $(basename "$inc")/*.h"
fi
echo "symbols: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
