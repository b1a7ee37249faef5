#!/bin/sh
# The repository stands alone: no tracked file may refer to a place outside
# it. Fails, naming file and line, on
#   - the workspace folder named "shared" that sits beside a development
#     checkout, reached through its parent,
#   - the absolute path of this checkout (a path of the build machine),
#   - home folders and other absolute paths that exist only on one machine
#     (home folders, root's, a workspace root).
# Lock files of npm (package-lock.json) are data written by npm and skipped.
# usage: check_paths.sh SOURCE_DIR
set -u
src=$(cd "$1" && pwd -P)
cd "$src" || exit 1
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  list() { git ls-files -z -- . ':!:*package-lock.json'; }
else
  list() { find . -type f ! -path './build/*' ! -path '*/node_modules/*' ! -name package-lock.json -print0; }
fi
# The sibling folder's name is put together here, so that this script does
# not match itself.
sib='\.\./'"shar"'ed'
pat="$sib|(^|[^A-Za-z0-9_.~-])/(home|root|Users|work)/[A-Za-z0-9_.-]"
# grep -F and -E cannot be mixed in one call: run the literal one apart.
hits=$(
  list | xargs -0 grep -n -I -E -e "$pat" -- 2>/dev/null
  list | xargs -0 grep -n -I -F -e "$src/" -- 2>/dev/null
)
files=$(list | tr '\0' '\n' | grep -c .)
if [ -n "$hits" ]; then
  echo "tracked files that refer to a path outside the repository:"
  printf '%s\n' "$hits" | sort -u | head -n 50
  echo "paths: 0 passed, 1 failed"
  exit 1
fi
echo "$files tracked files refer to nothing outside the repository"
echo "paths: 1 passed, 0 failed"
