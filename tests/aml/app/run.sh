#!/bin/sh
# Runs the MCP App browser test (app_test.mjs), installing the pinned
# playwright-core first (npm ci) when it is missing or older than
# package-lock.json; the same scheme as tests/interop/run.sh. Chromium is
# Debian's (/usr/bin/chromium, or $CHROMIUM): playwright-core downloads no
# browser.
#
# usage: run.sh MCP-SERVER-AML ARTIFACT-DIR
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "app: '$tool' is not on PATH; the browser test needs Node.js 20 or newer and npm" >&2
    echo "app: 0 passed, 1 failed"
    exit 1
  fi
done
if [ ! -x "${CHROMIUM:-/usr/bin/chromium}" ]; then
  echo "app: no Chromium at ${CHROMIUM:-/usr/bin/chromium} (Debian: apt-get install chromium)" >&2
  echo "app: 0 passed, 1 failed"
  exit 1
fi
exec 9<"$dir/package-lock.json"
flock 9
stamp="$dir/node_modules/.package-lock.json"
if [ ! -f "$stamp" ] || [ "$dir/package-lock.json" -nt "$stamp" ]; then
  echo "app: installing the pinned npm packages (npm ci in $dir)" >&2
  if ! npm ci --prefix "$dir" --no-audit --no-fund >&2; then
    echo "app: 'npm ci' failed; the npm registry must be reachable" >&2
    echo "app: 0 passed, 1 failed"
    exit 1
  fi
fi
flock -u 9
exec 9<&-
exec node "$dir/app_test.mjs" "$@"
