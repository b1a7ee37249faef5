#!/bin/sh
# Installs the Debian packages a make target needs, if any are missing.
# As root it runs apt-get; otherwise it prints the exact command and fails.
# usage: deps.sh PACKAGE...
set -eu
missing=""
for p in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
  echo "libmcp needs these Debian packages:$missing" >&2
  echo "run: sudo apt-get update && sudo apt-get install -y$missing" >&2
  exit 1
fi
echo "installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >&2
