#!/bin/sh
# The layers of the tree, bottom first, written once. A source file in a
# layer's folder may include the headers of its own layer and of layers
# below it, never of a layer above. Fails naming file and line.
#   src/:       util json schema auth server client transport
#   apps/aml/:  util store screen engine tools commands
# usage: check_layers.sh SOURCE_DIR
set -u
cd "$1" || exit 1
check() { # ROOT "LAYER..."
  root=$1 order=$2
  for dir in "$root"/*/; do
    layer=$(basename "$dir")
    rank=$(printf '%s\n' $order | grep -n -x "$layer" | cut -d: -f1)
    if [ -z "$rank" ]; then
      echo "$root/$layer/: a folder that is not in the layer order of tests/check_layers.sh"
      echo x; continue
    fi
    for f in "$dir"*.c "$dir"*.h; do
      [ -f "$f" ] || continue
      # '#include "LAYER/file.h"' lines: the layer is the first path part.
      grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]*/' "$f" | while IFS= read -r line; do
        n=${line%%:*}
        inc=$(printf '%s' "$line" | sed 's/.*include[[:space:]]*"\([^"]*\)".*/\1/')
        top=${inc%%/*}
        case "$inc" in mcp/*) continue ;; esac
        r=$(printf '%s\n' $order | grep -n -x "$top" | cut -d: -f1)
        if [ -z "$r" ]; then
          echo "$f:$n: includes \"$inc\", which is not in a layer of $root"
          echo x
        elif [ "$r" -gt "$rank" ]; then
          echo "$f:$n: layer '$layer' includes \"$inc\" from '$top', a layer above it"
          echo x
        fi
      done
    done
  done
}
out=$(check src "util json schema auth server client transport"
      if [ -d apps/aml/store ]; then check apps/aml "util store screen engine tools commands"; fi)
bad=$(printf '%s\n' "$out" | grep -c -x x)
printf '%s\n' "$out" | grep -v -x x | grep .
if [ "$bad" -ne 0 ]; then
  echo "layers: 0 passed, 1 failed"
  exit 1
fi
echo "layers: 1 passed, 0 failed"
