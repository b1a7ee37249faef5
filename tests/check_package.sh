#!/bin/sh
# Installs the build into a scratch prefix and checks what a user gets:
# the layout (headers, libmcp.so.0 with its SONAME, libmcp.a, libmcp.pc, the
# CMake package, both programs with their man pages, no RPATH), the man
# pages (rendered without warnings, the project version in their title
# line), then builds examples/hello_server.c and a version check
# (tests/package/consumer.c) against the installed copy twice: with
# find_package(mcp) (shared and static) and with pkg-config, and runs them:
# the server must answer initialize, tools/list and tools/call over stdio.
# usage: check_package.sh BUILD_DIR CONSUMER_SRC SCRATCH_DIR EXAMPLES_DIR VERSION
set -u
[ $# -eq 5 ] || { echo "usage: check_package.sh BUILD_DIR CONSUMER_SRC SCRATCH_DIR EXAMPLES_DIR VERSION" >&2; exit 2; }
build=$1 src=$2 scratch=$3 examples=$4 version=$5
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
finish() { echo "package: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }
log="$scratch/log"

rm -rf "$scratch"
mkdir -p "$scratch"
prefix="$scratch/prefix"
if cmake --install "$build" --prefix "$prefix" >"$log" 2>&1; then pass; else
  fail "cmake --install"; cat "$log"; finish; fi

# ---- layout ------------------------------------------------------------------
libdir=$(dirname "$(ls "$prefix"/lib*/libmcp.so.0 "$prefix"/lib*/*/libmcp.so.0 2>/dev/null | head -n 1)")
missing=""
for f in include/mcp/mcp.h include/mcp/base.h bin/mcp-cli bin/mcp-server-aml; do
  [ -e "$prefix/$f" ] || missing="$missing $f"
done
for f in libmcp.so.0 libmcp.so libmcp.a pkgconfig/libmcp.pc cmake/mcp/mcpConfig.cmake \
         cmake/mcp/mcpConfigVersion.cmake cmake/mcp/mcpTargets.cmake; do
  [ -e "$libdir/$f" ] || missing="$missing lib/$f"
done
for page in mcp-cli mcp-server-aml; do
  [ -e "$prefix/share/man/man1/$page.1.gz" ] || [ -e "$prefix/share/man/man1/$page.1" ] ||
    missing="$missing share/man/man1/$page.1.gz"
done
if [ -z "$missing" ]; then pass; else fail "not installed:$missing"; fi
# The Debian packages' copyright and changelog are not part of a plain install.
if [ -e "$prefix/share/doc" ]; then fail "share/doc installed by a plain install"; else pass; fi

soname=$(readelf -d "$libdir/libmcp.so.0" 2>/dev/null | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ "$soname" = "libmcp.so.0" ]; then pass; else fail "SONAME of libmcp.so.0 is '$soname'"; fi
rpath=""
for f in "$libdir/libmcp.so.0" "$prefix/bin/mcp-cli" "$prefix/bin/mcp-server-aml"; do
  readelf -d "$f" 2>/dev/null | grep -q -E '\((RPATH|RUNPATH)\)' && rpath="$rpath $f"
done
if [ -z "$rpath" ]; then pass; else fail "RPATH or RUNPATH in:$rpath"; fi

# The installed programs run and report the project version.
for prog in mcp-cli mcp-server-aml; do
  out=$("$prefix/bin/$prog" --version 2>&1)
  case "$out" in
    "$prog $version "*) pass ;;
    *) fail "$prog --version: '$out' (expected $prog $version ...)" ;;
  esac
done

# ---- man pages ---------------------------------------------------------------
for page in mcp-cli mcp-server-aml; do
  file="$prefix/share/man/man1/$page.1.gz"
  [ -e "$file" ] || file="$prefix/share/man/man1/$page.1"
  [ -e "$file" ] || { fail "$page.1 not installed"; continue; }
  th=$( (gzip -dc "$file" 2>/dev/null || cat "$file") | grep -m1 '^\.TH')
  case "$th" in
    *"\"libmcp $version\""*) pass ;;
    *) fail "$page.1: title line '$th' does not say libmcp $version" ;;
  esac
  if command -v man >/dev/null 2>&1; then
    warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l "$file" 2>&1 >/dev/null)
    if [ -z "$warnings" ]; then pass; else fail "man $page.1 warns:"; echo "$warnings"; fi
  fi
done

# ---- consumers ---------------------------------------------------------------
# Sanitizer flags of the build under test must reach the consumer's link too.
flags=$(sed -n 's/^CMAKE_C_FLAGS:STRING=//p' "$build/CMakeCache.txt")
san=$(sed -n 's/^MCP_SANITIZE:STRING=//p' "$build/CMakeCache.txt")
[ -n "$san" ] && flags="$flags -fsanitize=$san"

# check_version HOW PROGRAM [ENV...]: the program prints both versions.
check_version() {
  how=$1 prog=$2
  shift 2
  out=$(env "$@" "$prog" 2>&1)
  if [ "$out" = "libmcp $version headers $version: ok" ]; then pass; else
    fail "$how: consumer says '$out' (expected libmcp $version headers $version: ok)"; fi
}

# check_hello HOW PROGRAM [ENV...]: the example server answers over stdio.
check_hello() {
  how=$1 prog=$2
  shift 2
  out=$(printf '%s\n' \
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"check_package","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet","arguments":{"name":"Ada"}}}' |
    env "$@" timeout 30 "$prog" 2>&1)
  rc=$?
  if [ $rc -eq 0 ] &&
     printf '%s\n' "$out" | grep '"id":1' | grep -q '"serverInfo":{"name":"hello"' &&
     printf '%s\n' "$out" | grep '"id":2' | grep -q '"name":"greet"' &&
     printf '%s\n' "$out" | grep '"id":3' | grep -q 'Hello, Ada!'; then
    pass
  else
    fail "$how: hello_server (exit status $rc) answered:"; printf '%s\n' "$out" | head -c 3000; echo
  fi
}

# find_package(mcp): shared (consumer, hello) and static (hello_static).
if cmake -S "$src" -B "$scratch/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DMCP_EXAMPLES_DIR="$examples" \
      -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >"$log" 2>&1 &&
   cmake --build "$scratch/cmake" >>"$log" 2>&1; then
  pass
  check_version "find_package" "$scratch/cmake/consumer"
  check_hello "find_package, mcp::mcp" "$scratch/cmake/hello"
  check_hello "find_package, mcp::mcp_static" "$scratch/cmake/hello_static"
  if readelf -d "$scratch/cmake/hello" | grep -q 'NEEDED.*\[libmcp\.so\.0\]'; then pass; else
    fail "hello (find_package, mcp::mcp) does not link libmcp.so.0"; fi
else
  fail "the find_package(mcp) consumer does not build:"; cat "$log"
fi

# pkg-config.
export PKG_CONFIG_PATH="$libdir/pkgconfig"
pcver=$(pkg-config --modversion libmcp 2>&1)
if [ "$pcver" = "$version" ]; then pass; else fail "pkg-config --modversion libmcp: '$pcver'"; fi
# shellcheck disable=SC2046
if cc $flags "$src/consumer.c" -o "$scratch/consumer-pc" $(pkg-config --cflags --libs libmcp) >"$log" 2>&1 &&
   cc $flags "$examples/hello_server.c" -o "$scratch/hello-pc" $(pkg-config --cflags --libs libmcp) >>"$log" 2>&1; then
  pass
  check_version "pkg-config" "$scratch/consumer-pc" LD_LIBRARY_PATH="$libdir"
  check_hello "pkg-config" "$scratch/hello-pc" LD_LIBRARY_PATH="$libdir"
else
  fail "the pkg-config consumer does not build:"; cat "$log"
fi
finish
