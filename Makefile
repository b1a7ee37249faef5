# libmcp: the README's two commands, and the heavier jobs kept out of them.
#
#   make run     install missing Debian packages, build, serve the AML server (demo data)
#   make test    install missing Debian packages, build (ASan+UBSan), run every test
#   make fuzz    libFuzzer over every target (FUZZ_SECONDS each, default 300)
#   make valgrind  the unit tests under valgrind
#   make tsan    the tests under ThreadSanitizer
#   make bench   benchmarks against their peers
#   make deb     Debian packages (libmcp0, libmcp-dev, mcp-cli, mcp-server-aml) in build/deb
#
# The CMake presets (CMakePresets.json) hold the build settings.

SHELL := /bin/sh
JOBS ?= $(shell nproc)
FUZZ_SECONDS ?= 300

BUILD_PKGS := cmake make gcc g++ pkg-config libpcre2-dev libsqlite3-dev libssl-dev libmicrohttpd-dev libcurl4-openssl-dev libgraphviz-dev libicu-dev libpq-dev
# The interop tests (tests/interop) also need Node.js 20+ and npm. They come
# with the machine image, not from apt (Debian's nodejs is older): without
# them the interop.node_missing test fails and says so. flock (util-linux)
# serialises their `npm ci`.
TEST_PKGS := $(BUILD_PKGS) binutils util-linux
# package.deb builds the Debian packages (dpkg-dev, file) and runs lintian on
# them; package.consumer renders the man pages (man-db).
TEST_PKGS += lintian dpkg-dev file man-db
# aml.unit.fincen and aml.suite.filing validate FinCEN SAR XML with libxml2.
TEST_PKGS += libxml2-dev
# aml.app.browser drives Debian's Chromium (headless) with playwright-core
# from npm (tests/aml/app) to test the MCP App of mcp-server-aml.
TEST_PKGS += chromium
# The PostgreSQL store's tests start their own PostgreSQL 15 server
# (tests/lib/pg.sh: initdb and pg_ctl in a temporary folder).
TEST_PKGS += postgresql
# aml.suite.lb runs mcp-server-aml servers behind HAProxy (deploy/haproxy.cfg)
# and reads their audit log with the sqlite3 shell; curl probes the proxy.
TEST_PKGS += haproxy sqlite3 curl
DEB_PKGS := $(BUILD_PKGS) dpkg-dev file
FUZZ_PKGS := $(BUILD_PKGS) clang libclang-rt-14-dev
VALGRIND_PKGS := $(BUILD_PKGS) valgrind
BENCH_PKGS := $(BUILD_PKGS) libjansson-dev libcjson-dev
# bench/http drives its servers with wrk and opens legacy sessions with curl.
BENCH_PKGS += wrk curl
# bench/auth compares token verification with libjwt's.
BENCH_PKGS += libjwt-dev
# bench/aml/scale.sh runs a throwaway PostgreSQL (tests/lib/pg.sh) and reads
# SQLite stores with the sqlite3 shell.
BENCH_PKGS += postgresql sqlite3

.PHONY: all run test build-dev build-release fuzz valgrind tsan bench deb clean

all: build-release

build-release:
	@sh scripts/deps.sh $(BUILD_PKGS)
	cmake --preset release >/dev/null
	cmake --build --preset release -j $(JOBS)

build-dev:
	@sh scripts/deps.sh $(TEST_PKGS)
	cmake --preset dev >/dev/null
	cmake --build --preset dev -j $(JOBS)

# The AML server on its in-memory demo bank, over Streamable HTTP on
# loopback (PORT, default 8080); Ctrl-C stops it. README "Quick start" shows
# how to call it.
PORT ?= 8080
run: build-release
	@echo "mcp-server-aml: demo case store in memory; MCP endpoint http://127.0.0.1:$(PORT)/mcp (Ctrl-C stops)" >&2
	@echo "See README.md, Quick start, for a first call." >&2
	./build/release/apps/aml/mcp-server-aml --http 127.0.0.1:$(PORT)

test: build-dev
	@sh tests/run.sh build/dev

tsan:
	@sh scripts/deps.sh $(TEST_PKGS)
	cmake --preset tsan >/dev/null
	cmake --build --preset tsan -j $(JOBS)
	@sh tests/run.sh build/tsan -R '^(unit|suite\.(transcripts|http_load|http_client|client_stdio|stdio_hostile|stdio_batch|http_budget|http_attack|auth_http|oauth_flow))'

# suite.http_attack is left out: its checks are latencies and deadlines
# under attack (slowloris, floods), which cannot hold while valgrind runs
# one thread at a time. Its memory use was checked under memcheck by hand
# (docs/testing.md).
valgrind:
	@sh scripts/deps.sh $(VALGRIND_PKGS)
	cmake --preset valgrind >/dev/null
	cmake --build --preset valgrind -j $(JOBS)
	@sh tests/run.sh build/valgrind -R '^(unit|suite|fuzz|cli)\.' -E '^suite\.http_attack$$'

fuzz:
	@sh scripts/deps.sh $(FUZZ_PKGS)
	cmake --preset fuzz >/dev/null
	cmake --build --preset fuzz -j $(JOBS)
	@sh tests/fuzz/run.sh build/fuzz $(FUZZ_SECONDS)

bench:
	@sh scripts/deps.sh $(BENCH_PKGS)
	cmake --preset bench >/dev/null
	cmake --build --preset bench -j $(JOBS)
	./build/bench/bench/bench_json $(CURDIR)/tests/data/JSONTestSuite/test_parsing
	@[ -d bench/peers/node_modules ] || npm ci --prefix bench/peers
	sh bench/schema/run.sh build/bench
	sh bench/stdio/run.sh build/bench
	./build/bench/bench/bench_aml $(CURDIR)/build/bench/aml-work
	./build/bench/bench/bench_screen $(CURDIR)/tests/data/screening
	sh bench/aml/scale.sh build/bench
	sh bench/http/run.sh build/bench
	./build/bench/bench/bench_auth

# The Debian packages from a release build of their own (build/pkg, for
# /usr), written to build/deb (cmake/packaging.cmake, cmake/build_deb.sh).
deb:
	@sh scripts/deps.sh $(DEB_PKGS)
	JOBS=$(JOBS) sh cmake/build_deb.sh . build/pkg build/deb

clean:
	rm -rf build
