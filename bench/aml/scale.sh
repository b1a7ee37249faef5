#!/bin/sh
# Issue 18's figures in one run, on both stores (`make bench` runs it):
#
#   - import rows/s of the 1M-row AMLworld file (bench_aml, section 1);
#   - 16 concurrent assessCase calls against the same 16 serially
#     (bench_concurrent) on the bank of
#     `gen --seed 3 --customers 20000 --days 90 --instances 3` (1.7M
#     transactions);
#   - the monitoring scan of that bank with --jobs 1 and --jobs 2 on both
#     stores, and with two `scan --worker` processes started at once on
#     PostgreSQL; each run starts from the same freshly generated bank and
#     its cases are compared with the --jobs 1 run's (SQLite's scans run
#     three times each, alternating, and the speed-up is of their medians).
#
#   sh bench/aml/scale.sh BUILD_DIR [--quick]   (--quick: 2,000 customers)
#
# PostgreSQL is a throwaway cluster (tests/lib/pg.sh) with the durability
# of a real server (fsync and synchronous commit on) and memory settings of
# a small dedicated one (PG_OPTS below). Not a timed test: it prints figures.
set -u

build=${1:?usage: scale.sh BUILD_DIR [--quick]}
quick=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)

if [ -z "${AML_TEST_DB:-}" ]; then
    PG_OPTS=${PG_OPTS:-"-c shared_buffers=1GB -c maintenance_work_mem=512MB -c max_wal_size=8GB -c checkpoint_timeout=30min -c max_parallel_maintenance_workers=2 -c max_connections=100"}
    export PG_OPTS
    exec sh "$root/tests/lib/pg.sh" run sh "$0" "$@"
fi

build=$(cd "$build" && pwd)
bin=$build/apps/aml/mcp-server-aml
work=$build/aml-scale
mkdir -p "$work"
customers=20000
[ "$quick" = --quick ] && customers=2000

pgbin=${PG_BIN:-/usr/lib/postgresql/15/bin}
base=${AML_TEST_DB%/*}
psql_() { "$pgbin/psql" -X -q -At -h "$AML_TEST_PG_SOCKET" -p "$AML_TEST_PG_PORT" -U aml "$@"; }
newdb() { # newdb NAME [TEMPLATE]
    psql_ -d aml -c "DROP DATABASE IF EXISTS $1" >/dev/null 2>&1
    if [ $# -gt 1 ]; then
        psql_ -d aml -c "CREATE DATABASE $1 TEMPLATE $2" >/dev/null
    else
        psql_ -d aml -c "CREATE DATABASE $1" >/dev/null
    fi
}
now() { date +%s.%N; }
secs() { echo "$1 $2" | awk '{ printf "%.2f", $2 - $1 }'; }
# The cases a scan opened, as one line: count and a digest of (accounts, typologies) per case.
cases_sqlite() {
    sqlite3 "$1" "SELECT count(*) FROM cases;" | tr -d '\n'
    printf ' '
    sqlite3 "$1" "SELECT group_concat(acct_no, ',') FROM (SELECT acct_no FROM case_accounts ORDER BY acct_no);" | md5sum | cut -c1-12
}
cases_pg() {
    psql_ -d "$1" -c "SELECT count(*) FROM cases;" | tr -d '\n'
    printf ' '
    psql_ -d "$1" -c "SELECT string_agg(acct_no::text, ',' ORDER BY acct_no) FROM case_accounts;" | md5sum | cut -c1-12
}

echo "== mcp-server-aml at scale (issue 18): $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg) at start"

# 1. Import, both stores.
newdb import
AML_BENCH_PG=$base/import AML_BENCH_IMPORT_ONLY=1 "$build/bench/bench_aml" "$work" $quick || exit 1

# 2. 16 concurrent assessCase calls, both stores, on the issue's bank.
newdb concurrent
echo
AML_BENCH_PG=$base/concurrent "$build/bench/bench_concurrent" "$work" --customers "$customers" --rounds 5 || exit 1
psql_ -d aml -c "DROP DATABASE concurrent" >/dev/null

# 3. Scans.
echo
echo "scan of the bank of gen --seed 3 --customers $customers --days 90 --instances 3:"
gen="gen --seed 3 --customers $customers --days 90 --instances 3"
rm -f "$work/bank.db" "$work/bank.db-wal" "$work/bank.db-shm"
t0=$(now)
"$bin" $gen --db "$work/bank.db" >"$work/gen.log" 2>&1 || { cat "$work/gen.log"; exit 1; }
echo "  generated into SQLite in $(secs "$t0" "$(now)") s"
newdb bank
t0=$(now)
"$bin" $gen --db "$base/bank" >"$work/gen-pg.log" 2>&1 || { cat "$work/gen-pg.log"; exit 1; }
psql_ -d bank -c "VACUUM ANALYZE" >/dev/null
psql_ -d bank -c "CHECKPOINT" >/dev/null
echo "  generated into PostgreSQL in $(secs "$t0" "$(now)") s"

ref=
sqlite_run() { # sqlite_run JOBS
    cp "$work/bank.db" "$work/run.db"
    rm -f "$work/run.db-wal" "$work/run.db-shm"
    t0=$(now)
    "$bin" scan --db "$work/run.db" --jobs "$1" >"$work/scan.log" 2>&1 || { cat "$work/scan.log"; exit 1; }
    t=$(secs "$t0" "$(now)")
    c=$(cases_sqlite "$work/run.db")
    [ -n "$ref" ] || ref=$c
    same=no; [ "$c" = "$ref" ] && same=yes
    echo "  SQLite      --jobs $1:          $t s wall; cases (count digest) $c; same as SQLite --jobs 1: $same"
    eval "sqlite_$1=\"\${sqlite_$1:-} $t\""
}
median() { # median NUMBER...
    printf '%s\n' "$@" | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
pg_run() { # pg_run JOBS | pg_run workers N
    newdb run bank
    t0=$(now)
    if [ "$1" = workers ]; then
        pids=
        k=0
        while [ $k -lt "$2" ]; do
            "$bin" scan --db "$base/run" --worker >"$work/worker$k.log" 2>&1 &
            pids="$pids $!"
            k=$((k + 1))
        done
        for p in $pids; do wait "$p" || { cat "$work"/worker*.log; exit 1; }; done
        label="$2 x scan --worker"
    else
        "$bin" scan --db "$base/run" --jobs "$1" >"$work/scan.log" 2>&1 || { cat "$work/scan.log"; exit 1; }
        label="--jobs $1"
    fi
    t=$(secs "$t0" "$(now)")
    c=$(cases_pg run)
    same=no; [ "$c" = "$ref" ] && same=yes
    printf '  PostgreSQL  %-18s %s s wall; cases (count digest) %s; same as SQLite --jobs 1: %s\n' "$label:" "$t" "$c" "$same"
    eval "pg_$1=$t"
}
# SQLite's scans take seconds: three rounds of each, alternating, and
# their medians, so that one slow moment of a shared machine does not
# decide the speed-up. PostgreSQL's take a minute: one run each.
for _ in 1 2 3; do
    sqlite_run 1
    sqlite_run 2
done
# shellcheck disable=SC2086
sqlite_1=$(median $sqlite_1)
# shellcheck disable=SC2086
sqlite_2=$(median $sqlite_2)
echo "  SQLite medians: --jobs 1 $sqlite_1 s, --jobs 2 $sqlite_2 s"
pg_run 1
pg_run 2
pg_run workers 2
echo "$sqlite_1 $sqlite_2 $pg_1 $pg_2 $pg_workers" | awk '{
    printf "  speed-up with 2 jobs: SQLite %.2fx, PostgreSQL %.2fx; 2 workers on PostgreSQL %.2fx (target >= 1.7x on 2 cores)\n",
        $1 / $2, $3 / $4, $3 / $5 }'
psql_ -d aml -c "DROP DATABASE run" >/dev/null
echo "load average $(cut -d' ' -f1 /proc/loadavg) at the end"
rm -f "$work/bank.db" "$work/run.db" "$work"/*.db-wal "$work"/*.db-shm
