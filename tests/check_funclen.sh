#!/bin/sh
# The house rule: no function in src/ or apps/ over 150 lines. A
# table-driven dispatcher may be longer when the line before its name says
# "dispatcher" (listed here as allowed). Fails naming file, line and length.
# usage: check_funclen.sh SOURCE_DIR
set -u
cd "$1" || exit 1
files=$(find src apps -name '*.c' | sort)
long=$(sh scripts/funclen.sh 150 $files)
bad=""
for f in $(printf '%s\n' "$long" | awk 'NF { print $2 }'); do
  file=${f%%:*} line=${f##*:}
  prev=$((line - 1))
  if [ "$prev" -gt 0 ] && sed -n "${prev}p" "$file" | grep -qi dispatcher; then
    echo "allowed (dispatcher): $f"
  else
    bad="$bad $f"
  fi
done
if [ -n "$bad" ]; then
  echo "functions over 150 lines:"
  printf '%s\n' "$long" | grep -F "$(printf '%s\n' $bad)"
  echo "funclen: 0 passed, 1 failed"
  exit 1
fi
echo "$(echo $files | wc -w) files: no function over 150 lines"
echo "funclen: 1 passed, 0 failed"
