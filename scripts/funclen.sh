#!/bin/sh
# Lists C function definitions longer than LIMIT lines (default 150), longest
# first: "LINES FILE:LINE NAME". A definition starts at a line that begins at
# column 0 with an identifier and holds '(' and its body's '{' opens at
# column 0; it ends at the next '}' at column 0 (the project's style).
# usage: scripts/funclen.sh [LIMIT] FILE...
limit=150
case "${1-}" in [0-9]*) limit=$1; shift ;; esac
awk -v limit="$limit" '
  FNR == 1 { cand = ""; start = 0; inbody = 0 }
  !inbody && /^[A-Za-z_][A-Za-z0-9_ \*]*[ \*]?[A-Za-z_][A-Za-z0-9_]*\(/ {
    cand = $0; sub(/\(.*/, "", cand); n = split(cand, w, /[ \*]+/); cand = w[n]; candline = FNR
  }
  !inbody && /^\{/ && cand != "" { inbody = 1; start = candline; name = cand; next }
  inbody && /^\}/ {
    len = FNR - start + 1
    if (len > limit) printf "%d %s:%d %s\n", len, FILENAME, start, name
    inbody = 0; cand = ""
  }
' "$@" | sort -rn
