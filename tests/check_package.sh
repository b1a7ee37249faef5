#!/bin/sh
# Installs the build into a scratch prefix, then builds and runs a consumer
# twice: with CMake's find_package(mcp) and with pkg-config.
# usage: check_package.sh BUILD_DIR CONSUMER_SRC SCRATCH_DIR
set -eu
build=$1 src=$2 scratch=$3
rm -rf "$scratch"
mkdir -p "$scratch"
prefix="$scratch/prefix"
cmake --install "$build" --prefix "$prefix" >/dev/null
# Sanitizer flags of the build under test must reach the consumer's link too.
flags=$(sed -n 's/^CMAKE_C_FLAGS:STRING=//p' "$build/CMakeCache.txt")
san=$(sed -n 's/^MCP_SANITIZE:STRING=//p' "$build/CMakeCache.txt")
[ -n "$san" ] && flags="$flags -fsanitize=$san"
cmake -S "$src" -B "$scratch/cmake" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$scratch/cmake" >/dev/null
LD_LIBRARY_PATH="$prefix/lib" "$scratch/cmake/consumer"
libdir=$(ls -d "$prefix"/lib*/pkgconfig "$prefix"/lib/*/pkgconfig 2>/dev/null | head -n 1)
export PKG_CONFIG_PATH="$libdir"
cc $flags "$src/consumer.c" -o "$scratch/consumer-pc" $(pkg-config --cflags --libs libmcp)
LD_LIBRARY_PATH="$(dirname "$libdir")" "$scratch/consumer-pc"
echo "package: 2 passed, 0 failed"
