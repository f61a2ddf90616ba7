#!/usr/bin/env bash
# Integration: the coordinator's loop stays answerable while its store is slow or failing, and
# says so. (Issue 11: a report over a large store blocked the loop 6-8 s; a lock held by another
# process made it deaf for its whole 5 s busy timeout, and status showed no store error.)
# 0. A --db in a folder that does not exist is refused (exit 2), nothing created.
# 1. A report of a store with 10,000 sweeps (~7 MB of text, seconds to render) is made by
#    the reader thread: statuses asked after it are answered, one after another, while the report
#    is still on its way (at least 3), and the report arrives whole.
# 2. Another process holds the database's write lock: a submit fails after a short wait with the
#    store's message, status still answers and shows "store: FAILING" with the error; once the
#    lock is gone a submit succeeds and status shows the store ok.
. "$(dirname "$0")/lib.sh"
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
DB="$T/sw.db"
SPEC="$(dirname "$0")/../../sweeps/quickstart.yaml"
# A --db in a folder that does not exist is refused, naming the folder, and creates nothing.
set +e
"$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/nowhere/sw.db" --insecure \
  >"$T/nowhere.out" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] || fail "--db in a missing folder: exit $rc, expected 2"
grep -q "the folder $T/nowhere does not exist" "$T/nowhere.out" || fail "$(cat "$T/nowhere.out")"
[ ! -e "$T/nowhere" ] || fail "the missing folder was created"
start coord "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$DB" --insecure
wait_until 15 status_json || fail "coordinator did not answer status"
"$SW" submit "$SPEC" --coordinator "$CTL" >/dev/null || fail "submit"
kill -TERM "$PID_coord"
wait "$PID_coord" 2>/dev/null
# 9,999 finished copies of the sweep (gates, pairs and runs too): the scheduler loads only running
# sweeps, the report of every sweep renders them all.
sqlite3 "$DB" "
WITH RECURSIVE k(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM k WHERE i < 10000)
INSERT INTO sweeps (id, name, kind, spec_yaml, spec_json, spec_sha256, status, created_ms,
                    finished_ms, priority)
  SELECT i, name || '-' || i, kind, spec_yaml, spec_json, spec_sha256, 'cancelled', created_ms,
         created_ms + 1, 0 FROM sweeps, k WHERE sweeps.id = 1;
INSERT INTO gates (sweep_id, name, metric, status, n_target, n_max)
  SELECT s.id, g.name, g.metric, 'cancelled', g.n_target, g.n_max FROM sweeps s, gates g
  WHERE s.id > 1 AND g.sweep_id = 1;
INSERT INTO pairs (sweep_id, gate_id, idx, ord, status, attempt, created_ms)
  SELECT g.sweep_id, g.id, p.idx, p.ord, 'abandoned', 1, p.created_ms FROM gates g, pairs p
  WHERE g.sweep_id > 1 AND p.sweep_id = 1;
INSERT INTO runs (pair_id, arm, position, config_json, config_sha256)
  SELECT p2.id, r.arm, r.position, r.config_json, r.config_sha256 FROM pairs p2
  JOIN pairs p1 ON p1.sweep_id = 1 AND p1.idx = p2.idx JOIN runs r ON r.pair_id = p1.id
  WHERE p2.sweep_id > 1;" || fail "inflating the store"
start coord2 "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$DB" --insecure
wait_until 15 status_json || fail "restarted coordinator did not answer status"

# 1. The report in the background, then status: answered before the report is done.
"$SW" report --coordinator "$CTL" --format text -o "$T/report.txt" >"$T/report.log" 2>&1 &
report_pid=$!
sleep 0.2
# Statuses one after another while the report is made: a loop that waited for the report would
# answer the first only after the report was sent, and none after it while it is still running.
answered=0
while kill -0 "$report_pid" 2>/dev/null; do
  status_json >"$T/st-during.json" || fail "status while a report renders"
  kill -0 "$report_pid" 2>/dev/null && answered=$((answered + 1))
done
[ "$answered" -ge 3 ] ||
  fail "only $answered status replies came while the report was being made: the loop waited for it"
wait "$report_pid" || fail "report: $(cat "$T/report.log")"
n=$(grep -c '^sweep [0-9]* ' "$T/report.txt")
[ "$n" -eq 10000 ] || fail "the report holds $n sweeps, not 10000"
echo "$answered statuses answered while a report of $n sweeps ($(stat -c %s "$T/report.txt") bytes) was made"

# 2. The write lock held by another process for 20 s.
python3 - "$DB" "$T/locked" <<'PY' &
import sqlite3, sys, time, pathlib
c = sqlite3.connect(sys.argv[1], isolation_level=None, timeout=10)
c.execute("BEGIN EXCLUSIVE")
pathlib.Path(sys.argv[2]).touch()
time.sleep(20)
c.execute("COMMIT")
PY
locker=$!
PIDS+=("$locker")
wait_until 15 test -e "$T/locked" || fail "the lock was not taken"
if "$SW" submit "$SPEC" --coordinator "$CTL" >"$T/submit-locked.out" 2>&1; then
  fail "a submit succeeded while the store was locked"
fi
grep -q "locked" "$T/submit-locked.out" || fail "submit's error does not name the lock: $(cat "$T/submit-locked.out")"
status_json >"$T/st-locked.json" || fail "no status while the store is locked"
jq -e '.store.failing == true and (.store.last_error | test("locked")) and .store.failures >= 1' \
  "$T/st-locked.json" >/dev/null || fail "status during the outage: $(jq -c '.store' "$T/st-locked.json")"
"$SW" status --coordinator "$CTL" >"$T/st-locked.txt" || fail "text status during the outage"
grep -q "^store: FAILING since" "$T/st-locked.txt" || fail "text status: $(head -3 "$T/st-locked.txt")"
echo "during the outage: $(grep '^store:' "$T/st-locked.txt")"
wait "$locker"
"$SW" submit "$SPEC" --coordinator "$CTL" >/dev/null || fail "submit after the lock was released"
status_json >"$T/st-after.json" || fail "status after the outage"
jq -e '.store.failing == false and .store.failures >= 1' "$T/st-after.json" >/dev/null ||
  fail "status after the outage: $(jq -c '.store' "$T/st-after.json")"
echo PASS
