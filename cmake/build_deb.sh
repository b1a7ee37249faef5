#!/bin/sh
# Builds the Debian packages libmcp0, libmcp-dev, mcp-cli and mcp-server-aml
# (cmake/packaging.cmake) from a release build: configures BUILD_DIR for
# /usr (tests off, Debian's hardening flags), builds what the packages hold
# (not the examples or the conformance programs), and writes the
# .deb files to OUT_DIR. BUILD_DIR is kept, so a second run only rebuilds
# what changed. Needs dpkg-dev (dpkg-shlibdeps, dpkg-buildflags) and file.
# usage: build_deb.sh SOURCE_DIR BUILD_DIR OUT_DIR
# Environment: CMAKE, CPACK (default: on PATH), JOBS (default 2),
# MCP_DEB_MAINTAINER (the packages' Maintainer field, "Name <address>").
set -eu
[ $# -eq 3 ] || { echo "usage: build_deb.sh SOURCE_DIR BUILD_DIR OUT_DIR" >&2; exit 2; }
src=$(cd "$1" && pwd)
mkdir -p "$2" "$3"
build=$(cd "$2" && pwd)
out=$(cd "$3" && pwd)
cmake=${CMAKE:-cmake}
cpack=${CPACK:-cpack}
jobs=${JOBS:-2}
for tool in dpkg-shlibdeps dpkg-buildflags file; do
  command -v "$tool" >/dev/null 2>&1 || {
    echo "build_deb.sh: $tool is missing (apt-get install dpkg-dev file)" >&2; exit 1; }
done

# Debian's hardening flags (fortify, stack protector, relro, bindnow),
# without -g and -O2: the build type's -O3 applies and nothing is left to
# strip from libmcp.a. Computed from the source directory, so that the
# file-prefix map, and with it the flags, are the same on every run.
flags() {
  (cd "$src" && DEB_BUILD_MAINT_OPTIONS=hardening=+all DEB_CFLAGS_MAINT_STRIP='-g -O2' \
     DEB_CXXFLAGS_MAINT_STRIP='-g -O2' dpkg-buildflags --get "$1")
}
# -fno-ident: no .comment section naming the compiler in every object.
cflags="$(flags CPPFLAGS) $(flags CFLAGS) -fno-ident"
cxxflags="$(flags CPPFLAGS) $(flags CXXFLAGS) -fno-ident"
ldflags=$(flags LDFLAGS)

maint=""
[ -n "${MCP_DEB_MAINTAINER:-}" ] && maint="-DMCP_DEB_MAINTAINER=$MCP_DEB_MAINTAINER"
# shellcheck disable=SC2086
"$cmake" -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
  -DMCP_BUILD_TESTS=OFF -DMCP_BUILD_BENCH=OFF -DMCP_SANITIZE= -DMCP_FUZZ=OFF -DMCP_TEST_HOOKS=OFF \
  -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON \
  -DCMAKE_C_FLAGS="$cflags" -DCMAKE_CXX_FLAGS="$cxxflags" \
  -DCMAKE_EXE_LINKER_FLAGS="$ldflags" -DCMAKE_SHARED_LINKER_FLAGS="$ldflags" \
  ${maint:+"$maint"} >/dev/null
# Only what the packages hold (cmake/packaging.cmake: mcp-deb-inputs).
"$cmake" --build "$build" -j "$jobs" --target mcp-deb-inputs
rm -f "$out"/*.deb
(cd "$build" && "$cpack" -G DEB -B "$out" >/dev/null)
rm -rf "$out/_CPack_Packages"
ls "$out"/*.deb
