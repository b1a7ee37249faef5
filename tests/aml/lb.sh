#!/bin/sh
# aml.suite.lb: several mcp-server-aml servers behind HAProxy (issue 18,
# docs/deploy.md). Everything runs as the current user on loopback in
# WORK_DIR, and everything started here is stopped on exit:
#   - one store with a small generated bank (gen): a SQLite file, or the
#     PostgreSQL database AML_TEST_DB names (under tests/lib/pg.sh, which
#     starts and stops that server); three servers on it
#     (--http 127.0.0.1:0, each with its own --actor srvN so that the audit
#     log says which server ran a call);
#   - HAProxy with deploy/haproxy.cfg itself, only the ports, the log target
#     and the Debian paths (chroot, user, stats socket) replaced;
#   - aml_lb_client (aml_lb_client.c): legacy sessions, then 2026-07-28
#     calls, one server frozen and killed (SIGSTOP, SIGKILL) mid-run.
# Then, from the client's record and the audit log:
#   - the 2026-07-28 calls before the kill ran on all three servers;
#   - every call of a legacy session ran on one server (the GET stream and
#     the DELETE too, by HAProxy's log);
#   - no read-only call (listCases) was lost: each has a result;
#   - a call that failed is a writing one (assessTypology), and says it was
#     not sent again because it may have run;
#   - every call with a result has exactly one audit row, no call has two
#     (but a read-only call the victim ran before the kill and another
#     server ran again when the client sent it again),
#     and every audit row of a tool belongs to a call made here;
#   - `audit verify` passes.
# usage: lb.sh SOURCE_DIR MCP_SERVER_AML AML_LB_CLIENT WORK_DIR
set -u
[ $# -eq 4 ] || { echo "usage: lb.sh SOURCE_DIR MCP_SERVER_AML AML_LB_CLIENT WORK_DIR" >&2; exit 2; }
src=$1 aml=$2 client=$3 work=$4
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
check() { # check DESCRIPTION COMMAND...: passes when the command succeeds
  what=$1; shift
  if "$@"; then pass; else fail "$what"; fi
}
finish() { echo "aml_lb: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }

. "$src/tests/lib/aml_lb.sh"
pids=""
trap lb_stop EXIT
trap 'exit 1' INT TERM HUP

if ! command -v haproxy >/dev/null 2>&1; then
  echo "aml.suite.lb needs HAProxy (Debian: apt-get install haproxy; in the Makefile's TEST_PKGS)"
  fail "haproxy missing"; finish
fi
rm -rf "$work"
mkdir -p "$work"
# The store: PostgreSQL when run under tests/lib/pg.sh (AML_TEST_DB, the
# variant aml.suite.lb.pg), else one SQLite file the three servers share.
db=${AML_TEST_DB:-$work/bank.db}
case $db in
  postgresql://*|postgres://*)
    psql=$(command -v psql || echo /usr/lib/postgresql/15/bin/psql)
    audit_rows() { "$psql" -X -q -At -F ' ' -d "$db" \
      -c "SELECT request_sha256, actor FROM audit_log WHERE action LIKE 'tool.%' ORDER BY seq"; } ;;
  *)
    audit_rows() { sqlite3 -separator ' ' "$db" \
      "SELECT request_sha256, actor FROM audit_log WHERE action LIKE 'tool.%' ORDER BY seq"; } ;;
esac
echo "store: $db"

# ---- the store -------------------------------------------------------------------------------
if ! "$aml" gen --seed 2 --customers 30 --days 60 --instances 1 --db "$db" >"$work/gen.log" 2>&1; then
  fail "gen"; cat "$work/gen.log"; finish
fi

# ---- three servers on free ports -------------------------------------------------------------
lb_servers "$aml" "$db" "$work" srv || { fail "a server did not start"; finish; }
check "GET /healthz on a server answers ok" \
  sh -c "curl -sf http://127.0.0.1:$port1/healthz | grep -qx ok"

# ---- HAProxy with deploy/haproxy.cfg ---------------------------------------------------------
# The example as it is, but for a temporary folder and this user (tests/lib/aml_lb.sh).
check "deploy/haproxy.cfg is valid (haproxy -c)" haproxy -c -q -f "$src/deploy/haproxy.cfg"
lb_haproxy "$src" "$work" || { fail "haproxy did not start"; finish; }
changed=$(diff "$src/deploy/haproxy.cfg" "$work/haproxy.cfg" | grep -c '^>')
check "the configuration run differs from the example in 5 lines (log, bind, 3 servers): $changed" [ "$changed" -eq 5 ]
# Wait until the health checks have taken all three servers in.
for _ in $(seq 1 50); do
  curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$lb/mcp" -X POST 2>/dev/null | grep -q 415 && break
  sleep 0.1
done
check "HAProxy refuses a body over 4 MiB (413) before any server" \
  sh -c "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$lb/mcp -H 'Content-Type: application/json' \
         -H 'Content-Length: 5000000' -X POST --data x --max-time 5 | grep -qx 413"
check "HAProxy does not forward the health path" \
  sh -c "curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:$lb/healthz | grep -qx 404"

# ---- the client ------------------------------------------------------------------------------
calls=$work/calls.txt
if ! "$client" "http://127.0.0.1:$lb/mcp" "$calls" "$pid2" 2>"$work/client.log"; then
  fail "aml_lb_client"; cat "$work/client.log"
fi
# HAProxy logs a request when it ends: the legacy sessions' GET streams
# when the servers end them, at the client's DELETEs (before 3fca651,
# at the next keep-alive). Wait for them (at least 1.2 s for the last
# requests' lines, at most 10 s).
sleep 1.2
waited=12
while [ "$(grep -c '"GET /mcp' "$work/haproxy.log")" -lt 3 ] && [ "$waited" -lt 100 ]; do
  sleep 0.1
  waited=$((waited + 1))
done
echo "# HAProxy's log had the GET streams after $((waited / 10)).$((waited % 10)) s"
grep '^#' "$calls"
check "the victim server is gone" sh -c "! kill -0 $pid2 2>/dev/null"
audit_rows >"$work/audit.txt"

# ---- what ran where --------------------------------------------------------------------------
# Joins each call line (PHASE CLIENT TOOL SHA OUTCOME MESSAGE...) with the
# actors of its audit rows: PHASE CLIENT TOOL OUTCOME ROWS ACTORS.
awk 'NR == FNR { n[$1]++; a[$1] = a[$1] (a[$1] ? "," : "") $2; next }
     /^#/ { next }
     { print $1, $2, $3, $5, n[$4] + 0, (a[$4] ? a[$4] : "-") }' "$work/audit.txt" "$calls" >"$work/joined.txt"
total=$(grep -vc '^#' "$calls")
check "the client made every call (168 lines, got $total)" [ "$total" -eq 168 ]

spread=$(awk '$1 == "spread" && $5 == 1 { print $6 }' "$work/joined.txt" | sort -u | tr '\n' ' ')
check "2026-07-28 calls spread over the three servers (ran on: $spread)" [ "$spread" = "srv1 srv2 srv3 " ]

for k in 0 1 2; do
  for ph in before after; do
    on=$(awk -v w="legacy$k" -v p="$ph" '$2 == w && $1 == p && $5 == 1 { print $6 }' "$work/joined.txt" | sort -u)
    runs=$(awk -v w="legacy$k" -v p="$ph" '$2 == w && $1 == p && $5 == 1' "$work/joined.txt" | wc -l)
    check "legacy session $k ($ph the kill): its 3 calls ran on one server ($(echo $on), $runs ran)" \
      [ "$(echo "$on" | wc -w)" -eq 1 ] && [ "$runs" -eq 3 ]
  done
done
# HAProxy's log: each session id that came back from an initialize, and
# every later request carrying it (POST, the GET stream, DELETE), on one
# server, except requests after that server died (redispatched, 404).
# httplog: ... backend/server timers status ... {request id} {response id} "METHOD ..."
awk '{ srv = ""; st = ""; req = ""; res = ""
       for (i = 1; i <= NF; i++) {
         if ($i ~ /^aml\//) { srv = $i; st = $(i + 2) }
         if ($i ~ /^\{/ && req == "") { req = $i; res = $(i + 1) }
       }
       if (res != "{}" && res != "") own[res] = srv
       if (req != "{}" && req != "" && st !~ /^(404|502|503)$/) use[req] = use[req] " " srv }
     END { for (k in use) { n = split(use[k], s, " "); for (i = 1; i <= n; i++) if (s[i] != own[k]) bad++ }
           print bad + 0 }' "$work/haproxy.log" >"$work/sticky.txt"
check "HAProxy kept every request of a legacy session (POST, GET stream, DELETE) on its server \
($(cat "$work/sticky.txt") strays; log: $work/haproxy.log)" [ "$(cat "$work/sticky.txt")" -eq 0 ]
gets=$(grep -c '"GET /mcp' "$work/haproxy.log")
check "the legacy GET streams went through HAProxy ($gets)" [ "$gets" -ge 3 ]

lost_ro=$(awk '$3 == "listCases" && $4 != "ok"' "$work/joined.txt" | wc -l)
check "no read-only call was lost ($lost_ro without a result)" [ "$lost_ro" -eq 0 ]
bad_fail=$(grep -v '^#' "$calls" | awk '$5 == "fail" && !($3 == "assessTypology" && /may have run/)' | wc -l)
check "every failed call is a writing one that says it may have run ($bad_fail others)" [ "$bad_fail" -eq 0 ]
retried=$(grep -c 'sent again in' "$work/client.log")
lost_rw=$(awk '$5 == "fail"' "$calls" | wc -l)
echo "lost in flight at the kill: $retried read-only calls sent again, $lost_rw writing calls failed"
check "the kill caught calls in flight ($retried retried, $lost_rw failed)" [ $((retried + lost_rw)) -ge 1 ]
# A read-only call the victim ran before it was frozen, whose answer it
# never sent, ran twice: there and, sent again, on another server. That is
# the retry rule at work (harmless for a read-only tool), so it may have two
# rows, one of them the victim's; any other call has exactly one.
rerun='$3 == "listCases" && $5 == 2 && $6 ~ /(^|,)srv2(,|$)/ && $6 ~ /(^|,)srv[13](,|$)/'
reran=$(awk "$rerun" "$work/joined.txt" | wc -l)
echo "read-only calls the victim ran before the kill and another server ran again: $reran"
ok_not_once=$(awk "\$4 != \"fail\" && \$5 != 1 && !($rerun)" "$work/joined.txt" | wc -l)
check "every call with a result has exactly one audit row ($ok_not_once do not)" [ "$ok_not_once" -eq 0 ]
twice=$(awk "\$5 > 1 && !($rerun)" "$work/joined.txt" | wc -l)
check "no call ran twice but a read-only one sent again after the victim ran it ($twice did)" [ "$twice" -eq 0 ]
strays=$(awk 'NR == FNR { if ($0 !~ /^#/) mine[$4] = 1; next } !($1 in mine)' "$calls" "$work/audit.txt" | wc -l)
check "every audited tool call is one of the client's ($strays are not)" [ "$strays" -eq 0 ]
ran_failed=$(awk '$4 == "fail" && $5 == 1' "$work/joined.txt" | wc -l)
echo "writing calls that failed but had run (answer lost): $ran_failed"
for n in 1 2 3; do
  echo "srv$n ran $(awk -v a="srv$n" '$2 == a' "$work/audit.txt" | wc -l) calls"
done
check "audit verify passes" sh -c "'$aml' audit verify --db '$db' >'$work/verify.log' 2>&1"
finish
