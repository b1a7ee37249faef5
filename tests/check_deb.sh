#!/bin/sh
# Builds the Debian packages (cmake/build_deb.sh: a release build of its own
# in WORK_DIR/build, kept between runs) and checks them without installing
# anything: names and control fields (dpkg-deb --info), files where expected
# (dpkg-deb --contents), the ldconfig trigger and shlibs of libmcp0, that
# every dependency is installed on this machine; then, unpacked into
# WORK_DIR/root (dpkg-deb -x), the programs run (stripped, no RPATH, the
# project version, no test hook in mcp-server-aml) and examples/hello_server.c builds against the unpacked
# libmcp-dev with pkg-config and with find_package(mcp) and answers over
# stdio; last, lintian when it is installed (any E: line fails).
# usage: check_deb.sh SOURCE_DIR WORK_DIR VERSION
# Environment: CMAKE, CPACK (default: on PATH).
set -u
[ $# -eq 3 ] || { echo "usage: check_deb.sh SOURCE_DIR WORK_DIR VERSION" >&2; exit 2; }
src=$1 work=$2 version=$3
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
finish() { echo "package: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }
mkdir -p "$work"
log="$work/log"

for tool in dpkg-deb dpkg-shlibdeps dpkg-architecture file readelf; do
  command -v "$tool" >/dev/null 2>&1 || { fail "$tool is missing (apt-get install dpkg-dev file binutils)"; finish; }
done
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null)
out="$work/out"

start=$(date +%s)
if JOBS=2 sh "$src/cmake/build_deb.sh" "$src" "$work/build" "$out" >"$log" 2>&1; then
  pass
  echo "packages built in $(($(date +%s) - start)) s: $(cd "$out" && ls ./*.deb | sed 's|^\./||' | tr '\n' ' ')"
else
  fail "cmake/build_deb.sh:"; tail -n 40 "$log"; finish
fi

# ---- names, fields, files ----------------------------------------------------------
# field DEB NAME: the control field NAME of DEB.
field() { dpkg-deb -f "$1" "$2" 2>/dev/null; }

# check_package PACKAGE SECTION PATH...: the package exists with the right
# fields and holds every PATH (relative to /, "->" checks a symlink's target).
check_package() {
  pkg=$1 section=$2
  shift 2
  deb="$out/${pkg}_${version}_${arch}.deb"
  if [ ! -f "$deb" ]; then fail "$pkg: no ${pkg}_${version}_${arch}.deb"; return; fi
  pass
  bad=""
  [ "$(field "$deb" Package)" = "$pkg" ] || bad="$bad Package=$(field "$deb" Package)"
  [ "$(field "$deb" Version)" = "$version" ] || bad="$bad Version=$(field "$deb" Version)"
  [ "$(field "$deb" Architecture)" = "$arch" ] || bad="$bad Architecture=$(field "$deb" Architecture)"
  [ "$(field "$deb" Section)" = "$section" ] || bad="$bad Section=$(field "$deb" Section)"
  [ "$(field "$deb" Priority)" = "optional" ] || bad="$bad Priority=$(field "$deb" Priority)"
  [ -n "$(field "$deb" Maintainer)" ] || bad="$bad Maintainer=(none)"
  [ "$(field "$deb" Description | wc -l)" -ge 3 ] || bad="$bad Description=(no long description)"
  if [ -z "$bad" ]; then pass; else fail "$pkg: control fields:$bad"; fi
  contents=$(dpkg-deb --contents "$deb" | awk '{ p = $6; for (i = 7; i <= NF; i++) p = p " " $i; print p }')
  missing=""
  for want in "$@" "usr/share/doc/$pkg/copyright" "usr/share/doc/$pkg/changelog.gz"; do
    printf '%s\n' "$contents" | grep -q -x -F "./$want" || missing="$missing $want"
  done
  outside=$(printf '%s\n' "$contents" | grep -v -E '^\./(usr/.*)?$' || true)
  if [ -z "$missing" ] && [ -z "$outside" ]; then pass; else
    fail "$pkg: missing:${missing:- none}; outside /usr: ${outside:-none}"
    printf '%s\n' "$contents"
  fi
}

lib="usr/lib/$multiarch"
headers=""
for h in "$src"/include/mcp/*.h; do headers="$headers usr/include/mcp/$(basename "$h")"; done
check_package libmcp0 libs "$lib/libmcp.so.$version" "$lib/libmcp.so.0 -> libmcp.so.$version"
# shellcheck disable=SC2086
check_package libmcp-dev libdevel $headers "$lib/libmcp.so -> libmcp.so.0" "$lib/libmcp.a" \
  "$lib/pkgconfig/libmcp.pc" "$lib/cmake/mcp/mcpConfig.cmake" "$lib/cmake/mcp/mcpConfigVersion.cmake" \
  "$lib/cmake/mcp/mcpTargets.cmake"
check_package mcp-cli net usr/bin/mcp-cli usr/share/man/man1/mcp-cli.1.gz
check_package mcp-server-aml net usr/bin/mcp-server-aml usr/share/man/man1/mcp-server-aml.1.gz

# Only libmcp0 holds the shared library; it declares it (shlibs) and lets
# libc's trigger refresh the loader cache, with no maintainer scripts.
deb0="$out/libmcp0_${version}_${arch}.deb"
if [ -f "$deb0" ]; then
  ctrl="$work/control"
  rm -rf "$ctrl"
  dpkg-deb -e "$deb0" "$ctrl"
  if grep -q -x "libmcp 0 libmcp0 (>= $version)" "$ctrl/shlibs" 2>/dev/null &&
     grep -q -x "activate-noawait ldconfig" "$ctrl/triggers" 2>/dev/null &&
     [ ! -e "$ctrl/postinst" ] && [ ! -e "$ctrl/postrm" ]; then pass; else
    fail "libmcp0: control files: $(ls "$ctrl" | tr '\n' ' ') shlibs: $(cat "$ctrl/shlibs" 2>/dev/null)"; fi
fi
dev_depends=$(field "$out/libmcp-dev_${version}_${arch}.deb" Depends)
case "$dev_depends" in
  *"libmcp0 (= $version)"*) pass ;;
  *) fail "libmcp-dev: Depends '$dev_depends' lacks libmcp0 (= $version)" ;;
esac
# dpkg-shlibdeps computed the libraries' packages.
for pkg in libmcp0 mcp-cli mcp-server-aml; do
  case "$(field "$out/${pkg}_${version}_${arch}.deb" Depends)" in
    *libc6*) pass ;;
    *) fail "$pkg: Depends has no libc6 (dpkg-shlibdeps did not run)" ;;
  esac
done

# Installable here: every dependency (one of each alternative) is installed
# at a version that satisfies it, or is one of these packages.
unmet=""
for deb in "$out"/*.deb; do
  deps=$(field "$deb" Depends | tr ',' '\n')
  while IFS= read -r group; do
    [ -n "$group" ] || continue
    ok=0
    alts=$(printf '%s\n' "$group" | tr '|' '\n')
    while IFS= read -r alt; do
      name=$(printf '%s\n' "$alt" | sed 's/^ *\([^ (]*\).*/\1/')
      rel=$(printf '%s\n' "$alt" | sed -n 's/.*(\([<>=]*\) *\([^)]*\)).*/\1 \2/p')
      case "$name" in libmcp0|libmcp-dev|mcp-cli|mcp-server-aml) ok=1; break ;; esac
      have=$(dpkg-query -W -f='${Status} ${Version}' "$name" 2>/dev/null | sed -n 's/^install ok installed //p')
      [ -n "$have" ] || continue
      # shellcheck disable=SC2086
      if [ -z "$rel" ] || dpkg --compare-versions "$have" $rel; then ok=1; break; fi
    done <<EOF
$alts
EOF
    [ $ok -eq 1 ] || unmet="$unmet $(basename "$deb"):$group;"
  done <<EOF
$deps
EOF
done
if [ -z "$unmet" ]; then pass; else fail "dependencies not installed here:$unmet"; fi

# ---- unpacked: programs and a consumer -------------------------------------------
root="$work/root"
rm -rf "$root"
for deb in "$out"/*.deb; do dpkg-deb -x "$deb" "$root"; done
export LD_LIBRARY_PATH="$root/$lib"
for f in "$root/usr/bin/mcp-cli" "$root/usr/bin/mcp-server-aml" "$root/$lib/libmcp.so.$version"; do
  desc=$(file -b "$f")
  case "$desc" in
    *"not stripped"*) fail "$f is not stripped: $desc" ;;
    *stripped*) pass ;;
    *) fail "$f: $desc" ;;
  esac
  if readelf -d "$f" | grep -q -E '\((RPATH|RUNPATH)\)'; then fail "$f has an RPATH"; else pass; fi
done
soname=$(readelf -d "$root/$lib/libmcp.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" = "libmcp.so.0" ]; then pass; else fail "SONAME is '$soname'"; fi
for prog in mcp-cli mcp-server-aml; do
  v=$("$root/usr/bin/$prog" --version 2>&1)
  case "$v" in
    "$prog $version "*) pass ;;
    *) fail "$prog --version: '$v'" ;;
  esac
  if "$root/usr/bin/$prog" --help >"$log" 2>&1 && grep -q usage "$log"; then pass; else
    fail "$prog --help:"; cat "$log"; fi
done
tools=$(timeout 60 "$root/usr/bin/mcp-cli" tools -- "$root/usr/bin/mcp-server-aml" 2>&1)
case "$tools" in
  *'"name":"listCases"'*'"name":"draftSar"'*|*'"name":"draftSar"'*'"name":"listCases"'*) pass ;;
  *) fail "mcp-cli tools -- mcp-server-aml: $tools" ;;
esac
# A shipped binary reads no test hook (MCP_TEST_HOOKS is off: docs/testing.md).
if grep -q -a 'AML_TEST_' "$root/usr/bin/mcp-server-aml"; then
  fail "the packaged mcp-server-aml holds a test hook (AML_TEST_*)"
else pass; fi

# hello_answers PROGRAM: examples/hello_server.c answers over stdio.
hello_answers() {
  printf '%s\n' \
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"check_deb","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' |
    timeout 30 "$1" 2>&1 | grep '"id":2' | grep -q '"name":"greet"'
}
consumer="$src/tests/package"
export PKG_CONFIG_PATH="$root/$lib/pkgconfig"
# shellcheck disable=SC2046
if cc "$consumer/consumer.c" -o "$work/consumer" $(pkg-config --cflags --libs libmcp) >"$log" 2>&1 &&
   cc "$src/examples/hello_server.c" -o "$work/hello" $(pkg-config --cflags --libs libmcp) >>"$log" 2>&1; then
  v=$("$work/consumer" 2>&1)
  if [ "$v" = "libmcp $version headers $version: ok" ]; then pass; else fail "pkg-config consumer: '$v'"; fi
  if hello_answers "$work/hello"; then pass; else fail "hello_server (pkg-config) does not answer"; fi
else
  fail "building against the unpacked libmcp-dev with pkg-config:"; cat "$log"
fi
rm -rf "$work/consumer-cmake"
if "${CMAKE:-cmake}" -S "$consumer" -B "$work/consumer-cmake" -DCMAKE_PREFIX_PATH="$root/usr" \
     -DMCP_EXAMPLES_DIR="$src/examples" >"$log" 2>&1 &&
   "${CMAKE:-cmake}" --build "$work/consumer-cmake" -j 2 >>"$log" 2>&1; then
  if hello_answers "$work/consumer-cmake/hello" && hello_answers "$work/consumer-cmake/hello_static"; then
    pass; else fail "hello_server (find_package, unpacked packages) does not answer"; fi
else
  fail "building against the unpacked libmcp-dev with find_package(mcp):"; cat "$log"
fi

# ---- lintian ---------------------------------------------------------------------
if command -v lintian >/dev/null 2>&1; then
  lintian --no-tag-display-limit "$out"/*.deb >"$log" 2>&1
  grep -E '^[EWI]:' "$log"
  if grep -q '^E:' "$log"; then fail "lintian reports errors"; else
    pass; echo "lintian: no errors ($(grep -c '^W:' "$log") warnings)"; fi
else
  echo "lintian is not installed: not run"
fi
finish
