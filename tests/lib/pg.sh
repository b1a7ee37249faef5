#!/bin/sh
# A throwaway PostgreSQL 15 cluster for one test command.
#
#   sh tests/lib/pg.sh run CMD [ARGS...]
#
# initdb's a cluster in a fresh temporary folder (C locale, UTF8, trust
# authentication: on a unix socket in that folder and on 127.0.0.1 at a free
# port), starts it with pg_ctl, creates the database `aml`, runs CMD with
#   AML_TEST_DB=postgresql://aml@127.0.0.1:PORT/aml   (libpq connection URI)
#   AML_TEST_PG_SOCKET=DIR  AML_TEST_PG_PORT=PORT
# in its environment, then stops the cluster and removes the folder whatever
# CMD did (also on a signal). Exits with CMD's status; 77 never: a missing
# PostgreSQL is a failure that says what to install.
#
# Debian's initdb refuses to run as root: as root the cluster belongs to the
# `postgres` user (Debian's postgresql package creates it; `nobody` when it
# is missing) through runuser, and CMD still runs as root (trust
# authentication: the database role is `aml` whoever connects). As any other
# user everything runs as that user.
#
# PG_BIN overrides the binaries' folder (default /usr/lib/postgresql/15/bin);
# PG_OPTS the server settings (see below).
set -u

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
# PG_OPTS: the server's settings (postgres -c options). The default suits
# tests: no fsync, a small shared buffer. bench/aml/scale.sh gives a
# durable server's.
PG_OPTS=${PG_OPTS:-"-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=100 -c shared_buffers=32MB"}

die() {
    echo "pg.sh: $*" >&2
    echo "0 passed, 1 failed"
    exit 1
}

[ "${1:-}" = run ] && [ $# -ge 2 ] || die "usage: pg.sh run CMD [ARGS...]"
shift
[ -x "$PG_BIN/initdb" ] || die "PostgreSQL 15 is missing ($PG_BIN/initdb): apt-get install postgresql (the Makefile's TEST_PKGS)"

as_owner() { "$@"; }
owner=
if [ "$(id -u)" = 0 ]; then
    owner=postgres
    id "$owner" >/dev/null 2>&1 || owner=nobody
    as_owner() { runuser -u "$owner" -- "$@"; }
fi

dir=$(mktemp -d "${TMPDIR:-/tmp}/aml-pg.XXXXXX") || die "cannot make a temporary folder"
chmod 755 "$dir"
[ -z "$owner" ] || chown "$owner" "$dir"

cleanup() {
    if [ -f "$dir/data/postmaster.pid" ]; then
        as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1
    fi
    rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

as_owner "$PG_BIN/initdb" -D "$dir/data" -U aml --auth=trust --locale=C -E UTF8 --no-sync \
    >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed"; }

# A free port: the start fails when another listener has it; try a few.
started=
port=
for attempt in 1 2 3 4 5 6 7 8; do
    port=$(( 20000 + ($$ * 7 + attempt * 7919 + $(date +%N | sed 's/^0*//;s/^$/0/') ) % 30000 ))
    if as_owner "$PG_BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
        -o "-p $port -k $dir -c listen_addresses=127.0.0.1 $PG_OPTS" \
        start >/dev/null 2>&1; then
        started=1
        break
    fi
done
[ -n "$started" ] || { cat "$dir/server.log" >&2 2>/dev/null; die "the PostgreSQL server did not start"; }

"$PG_BIN/createdb" -h "$dir" -p "$port" -U aml aml || die "createdb failed"

AML_TEST_DB="postgresql://aml@127.0.0.1:$port/aml"
AML_TEST_PG_SOCKET=$dir
AML_TEST_PG_PORT=$port
export AML_TEST_DB AML_TEST_PG_SOCKET AML_TEST_PG_PORT
echo "pg.sh: PostgreSQL on $AML_TEST_DB (socket folder $dir)" >&2

"$@"
rc=$?
exit $rc
