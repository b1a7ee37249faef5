#!/bin/sh
# aml.pg.same: the same generated bank on SQLite and on PostgreSQL answers
# with the same bytes (docs/aml.md, "PostgreSQL"). Run under tests/lib/pg.sh
# (AML_TEST_DB). Both stores get `gen` with one seed; then, on each store
# through the MCP tools over stdio: assessCase and draftSar on every case,
# listCases with each filter, traceFunds and caseGraph, and a workflow
# (assignCase, closeCase, reviewClosure by a second principal, listCases by
# workflow state); the answers must match byte for byte once the wall-clock
# times (createdAt, history "at") are masked. The SAR of one case as FinCEN
# XML from the command line too.
#
#   sh pg_same.sh MCP-SERVER-AML WORKDIR
set -u

bin=$1
work=$2
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() {
    echo "FAIL $*"
    fail=$((fail + 1))
}
finish() {
    echo "pg_same: $pass passed, $fail failed"
    [ "$fail" = 0 ]
    exit $?
}

if [ -z "${AML_TEST_DB:-}" ]; then
    bad "AML_TEST_DB is not set: run under tests/lib/pg.sh"
    finish
fi
rm -rf "$work"
mkdir -p "$work"
sq=$work/bank.db
pg=$AML_TEST_DB

# Wall-clock times differ between two runs; everything else must not.
mask() { sed -E 's/[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z/<now>/g' "$1"; }

# same NAME: compares $work/NAME.sq and $work/NAME.pg
same() {
    mask "$work/$1.sq" >"$work/$1.sq.m"
    mask "$work/$1.pg" >"$work/$1.pg.m"
    if [ ! -s "$work/$1.sq.m" ]; then
        bad "$1: no answer on SQLite"
    elif cmp -s "$work/$1.sq.m" "$work/$1.pg.m"; then
        ok
    else
        bad "$1: SQLite and PostgreSQL differ"
        diff "$work/$1.sq.m" "$work/$1.pg.m" | cut -c1-300 | head -6
    fi
}

# session DB ACTOR OUT CALL... : one stdio session, one tools/call per CALL (NAME 'ARGUMENTS-JSON'); the
# server's input stays open until every call is answered (it drops calls in flight at the end of its input).
session() {
    db=$1 actor=$2 out=$3
    shift 3
    rm -f "$work/fifo"
    mkfifo "$work/fifo"
    "$bin" --db "$db" --actor "$actor" <"$work/fifo" >"$out.raw" 2>"$out.err" &
    server=$!
    exec 3>"$work/fifo"
    printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pg-same","version":"1"}}}' >&3
    printf '%s\n' '{"jsonrpc":"2.0","method":"notifications/initialized"}' >&3
    id=2
    while [ $# -ge 2 ]; do
        printf '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"%s","arguments":%s}}\n' "$id" "$1" "$2" >&3
        id=$((id + 1))
        shift 2
    done
    waited=0
    while [ "$(grep -c '"id":' "$out.raw")" -lt $((id - 1)) ] && [ $waited -lt 1200 ] && kill -0 $server 2>/dev/null; do
        sleep 0.25
        waited=$((waited + 1))
    done
    exec 3>&-
    wait $server
    sort "$out.raw" >"$out" # one answer a line, in any order
}

# both NAME ACTOR CALL... : the session on both stores, compared
both() {
    name=$1 actor=$2
    shift 2
    session "$sq" "$actor" "$work/$name.sq" "$@"
    session "$pg" "$actor" "$work/$name.pg" "$@"
    same "$name"
}

for db in "$sq" "$pg"; do
    if ! "$bin" gen --seed 11 --customers 250 --days 60 --db "$db" >"$work/gen.out" 2>&1; then
        bad "gen on $db: $(tail -1 "$work/gen.out")"
        finish
    fi
done

both list 'pg-same' listCases '{"status":"any","limit":100}'
cases=$(grep -o '"caseId":"[^"]*"' "$work/list.sq" | sort -u | sed 's/"caseId":"//; s/"$//')
n=$(echo "$cases" | grep -c .)
[ "$n" -ge 10 ] && ok || bad "only $n cases generated"

assess=
sar=
for c in $cases; do
    assess="$assess assessCase {\"caseId\":\"$c\"}"
    sar="$sar draftSar {\"caseId\":\"$c\"}"
done
# shellcheck disable=SC2086 # word splitting makes the call list
both assess pg-same $assess
# shellcheck disable=SC2086
both sar pg-same $sar

first=$(echo "$cases" | head -1)
acct=$(grep -o '"focusAccounts":\["[^"]*"' "$work/list.sq" | head -1 | sed 's/.*\["//; s/"$//')
both lists pg-same \
    listCases '{}' \
    listCases '{"status":"any","limit":7}' \
    listCases '{"status":"any","riskLevel":"high"}' \
    listCases '{"status":"any","riskLevel":"unassessed"}' \
    listCases '{"status":"any","typology":"T13_THIRD_PARTY"}' \
    listCases '{"status":"any","overdue":true,"limit":100}' \
    listCases '{"status":"open","openedFrom":"2025-01-01","openedTo":"2030-01-01","limit":3}'
both trail pg-same \
    traceFunds "{\"accountId\":\"$acct\"}" \
    traceFunds "{\"accountId\":\"$acct\",\"direction\":\"backward\",\"maxHops\":4}" \
    caseGraph "{\"caseId\":\"$first\"}"

# The workflow, one step per session (calls of one session may run in parallel).
both wf1 alice assignCase "{\"caseId\":\"$first\",\"assignee\":\"alice\"}"
both wf2 alice closeCase "{\"caseId\":\"$first\",\"disposition\":\"false_positive\",\"rationale\":\"reviewed: payroll\"}"
both wf3 bob listCases '{"status":"any","state":"pending_approval"}' listCases '{"status":"any","assignee":"alice"}'
both wf4 bob reviewClosure "{\"caseId\":\"$first\",\"approve\":true}"
both wf5 bob listCases '{"status":"any","disposition":"false_positive"}' listCases '{"status":"any","state":"closed"}'
both wf6 bob suppressAlert "{\"caseId\":\"$first\",\"accountId\":\"$acct\",\"typology\":\"T01_STRUCTURING\",\"until\":\"2027-06-01\",\"reason\":\"reviewed, nothing to see\"}"

# FinCEN XML from the command line for the first case whose SAR is warranted.
for c in $cases; do
    if "$bin" sar --db "$sq" "$c" --format fincen-xml --out "$work/xml.sq" >/dev/null 2>&1 && [ -s "$work/xml.sq" ]; then
        "$bin" sar --db "$pg" "$c" --format fincen-xml --out "$work/xml.pg" >"$work/xml.pg.err" 2>&1
        break
    fi
done
same xml

finish
