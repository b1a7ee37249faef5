#!/bin/sh
# Checks that a shared library exports only mcp_* functions and data.
# usage: check_symbols.sh LIBRARY
set -eu
lib=$1
syms=$(nm -D --defined-only "$lib" | awk '{print $3}' | sed 's/@.*//' | sort -u)
bad=$(printf '%s\n' "$syms" | grep -v -E '^(mcp_[a-z0-9_]+|_init|_fini|_edata|_end|__bss_start)$' || true)
count=$(printf '%s\n' "$syms" | grep -c '^mcp_' || true)
internal=$(printf '%s\n' "$syms" | grep -c '^mcp__' || true)
if [ -n "$bad" ] || [ "$internal" -ne 0 ]; then
  echo "unexpected exported symbols:"; printf '%s\n' "$bad"
  printf '%s\n' "$syms" | grep '^mcp__' || true
  echo "symbols: 0 passed, 1 failed"; exit 1
fi
if [ "$count" -lt 10 ]; then
  echo "only $count mcp_ symbols exported: visibility is broken"
  echo "symbols: 0 passed, 1 failed"; exit 1
fi
echo "$count mcp_* symbols exported, nothing else"
