#!/bin/sh
# Detection at bank size (issue 17): a release build of mcp-server-aml of its
# own (WORK_DIR/build, kept between runs, so later runs only rebuild what
# changed), then generated banks scanned as a monitoring team would:
#   seed 3: 20,000 background customers x 90 days (about 1.7M transactions),
#   seeds 5 and 7: 4,000 x 90 days (kept smaller so that the suite stays a
#   few minutes on two cores),
# each with 3 injected instances and 3 look-alikes per typology. For each:
# gen, scan (every account, every typology), eval. Pooled over the seeds,
# per typology: recall >= 95% of injected instances flagged by the scan for
# their typology, precision >= 90% of the accounts it flagged for it (matches
# on instances whose construction also meets the typology counted neither
# way); and the scan flags at most 1% of the active customers with no
# injected instance. The table and the timings are printed.
# usage: scale.sh SOURCE_DIR WORK_DIR
set -u
rm -f "${2:-.}/pooled" 2>/dev/null
[ $# -eq 2 ] || { echo "usage: scale.sh SOURCE_DIR WORK_DIR" >&2; exit 2; }
src=$1 work=$2
passed=0 failed=0
pass() { passed=$((passed + 1)); }
fail() { failed=$((failed + 1)); echo "FAIL: $*"; }
finish() { echo "aml_scale: $passed passed, $failed failed"; [ "$failed" -eq 0 ]; exit $?; }
mkdir -p "$work"
cmake=${CMAKE:-cmake}

start=$(date +%s)
if "$cmake" -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DMCP_BUILD_TESTS=OFF -DMCP_BUILD_BENCH=OFF \
     >"$work/build.log" 2>&1 &&
   "$cmake" --build "$work/build" --target mcp-server-aml -j 2 >>"$work/build.log" 2>&1; then
  pass
  echo "release build of mcp-server-aml: $(($(date +%s) - start)) s"
else
  fail "release build:"; tail -n 30 "$work/build.log"; finish
fi
aml=$work/build/apps/aml/mcp-server-aml

: >"$work/tables"
for spec in 3:20000 5:4000 7:4000; do
  seed=${spec%%:*} customers=${spec#*:}
  db=$work/bank-$seed.db
  rm -f "$db" "$db-wal" "$db-shm"
  t0=$(date +%s)
  if ! "$aml" gen --seed "$seed" --customers "$customers" --days 90 --instances 3 --db "$db" >"$work/gen-$seed.log" 2>&1; then
    fail "gen seed $seed"; cat "$work/gen-$seed.log"; continue
  fi
  t1=$(date +%s)
  if ! "$aml" scan --db "$db" >"$work/scan-$seed.log" 2>&1; then
    fail "scan seed $seed"; cat "$work/scan-$seed.log"; continue
  fi
  t2=$(date +%s)
  if ! "$aml" eval --db "$db" >"$work/eval-$seed.log" 2>&1; then
    fail "eval seed $seed"; cat "$work/eval-$seed.log"; continue
  fi
  t3=$(date +%s)
  pass
  echo "seed $seed, $customers customers: $(cat "$work/gen-$seed.log" | sed 's/^generated seed [0-9]*: //')"
  echo "  gen $((t1 - t0)) s, scan $((t2 - t1)) s, eval $((t3 - t2)) s; $(head -n 1 "$work/scan-$seed.log")"
  sed -n '/^The monitoring scan/,$p' "$work/eval-$seed.log" >>"$work/tables"
  rm -f "$db" "$db-wal" "$db-shm"
done

# Pool the seeds' tables: per typology injected, detected, alerts, true, overlap; the alert rate.
awk -v out="$work/pooled" '
  /^T[0-9][0-9]_/ { inj[$1] += $2; det[$1] += $3; al[$1] += $5; tr[$1] += $6; ov[$1] += $7; fi[$1] += $8; fb[$1] += $9 }
  /^alert rate:/ { flagged += $3; active += $5 }
  END {
    printf "%-28s %8s %8s %7s %7s %6s %8s %10s %9s %9s\n", "typology (pooled)", "injected", "detected", "recall",
           "alerts", "true", "overlap", "false:inst", "false:bg", "precision"
    bad = 0
    for (t in inj) names[++n] = t
    for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (names[j] < names[i]) { x = names[i]; names[i] = names[j]; names[j] = x }
    for (i = 1; i <= n; i++) {
      t = names[i]
      rec = inj[t] ? det[t] / inj[t] : 0
      judged = al[t] - ov[t]
      prec = judged ? tr[t] / judged : 1
      printf "%-28s %8d %8d %6.1f%% %7d %6d %8d %10d %9d %8.1f%%\n", t, inj[t], det[t], 100 * rec, al[t], tr[t], ov[t],
             fi[t], fb[t], 100 * prec
      if (rec < 0.95) { print "recall below 95%: " t > out; bad++ }
      if (prec < 0.90) { print "precision below 90%: " t > out; bad++ }
    }
    rate = active ? flagged / active : 1
    printf "alert rate: %d of %d active customers with no injected instance flagged (%.2f%%)\n", flagged, active, 100 * rate
    if (rate > 0.01) { print "alert rate above 1%" > out; bad++ }
    if (n != 14) { print "expected 14 typologies, got " n > out; bad++ }
  }' "$work/tables"
if [ -s "$work/pooled" ]; then
  while read -r line; do fail "$line"; done <"$work/pooled"
else
  pass
fi
rm -f "$work/pooled"
finish
