#!/usr/bin/env bash
# Integration (9): at-least-once delivery. The coordinator is killed (SIGKILL) while a worker's
# trainer runs; the worker spools the finished result, reconnects to the restarted coordinator
# (same database: the lease survives with a fresh deadline), resends it, and the sweep completes
# with every result acknowledged (the spool ends empty). A second coordinator on the same
# database is refused while the first runs; after the SIGKILL the lock is gone with it.
. "$(dirname "$0")/lib.sh"
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
coord() { start "$1" "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" --insecure \
  --heartbeat-ms 200 --liveness 3 --lease-ttl-ms 20000; }
coord coord
wait_until 15 status_json || fail "coordinator did not answer status"
start w1 "$SW" worker --coordinator "$WORK" --insecure --id w1 --work-dir "$T/w1" --heartbeat-ms 200
gate_spec "$T/gate.yaml" it-restart 2 1.5
id=$("$SW" submit "$T/gate.yaml" --coordinator "$CTL") || fail "submit failed"
running() {
  status_json >"$T/status.json" || return 1
  jq -e '[.coordinator.sessions[] | select(.run > 0)] | length == 1' "$T/status.json"
}
wait_until 30 running || fail "no run started"
# One coordinator per database: a second one on the same file (other ports) refuses to start
# and names the holder; it leaves the first one's leases alone.
set +e
"$SW" coordinator --bind-work "tcp://127.0.0.1:$((PORT + 5))" --bind-control "tcp://127.0.0.1:$((PORT + 6))" \
  --db "$T/sw.db" --insecure >"$T/second.out" 2>&1
rc=$?
set -e
[ $rc -ne 0 ] || fail "a second coordinator started on the same database"
grep -q "in use by another coordinator (pid $PID_coord" "$T/second.out" ||
  fail "the second coordinator did not say why: $(cat "$T/second.out")"
echo "second coordinator refused: $(grep -o 'in use by another coordinator[^:]*' "$T/second.out")"
kill -KILL "$PID_coord"
# The run finishes while nobody listens: its result must wait in the spool.
spooled() { ls "$T/w1/spool/"*.msg >/dev/null 2>&1; }
wait_until 15 spooled || fail "the finished run was not spooled"
coord coord2
wait_until 15 status_json || fail "restarted coordinator did not answer"
done_() {
  status_json >"$T/status.json" || return 1
  jq -e '[.sweeps[] | select(.status == "running")] | length == 0' "$T/status.json"
}
wait_until 60 done_ || fail "the sweep did not finish after the restart"
grep -q "resent spooled result" "$T/w1.log" || fail "the worker did not resend its spool"
empty() { ! spooled; }
wait_until 10 empty || fail "spool not emptied by acknowledgements"
"$SW" report "$id" --db "$T/sw.db" --format json >"$T/report.json" || fail "report"
jq -e '[.sweeps[0].gates[0].pairs[] | .off.status == "ok" and .on.status == "ok"] | all and length == 2' \
  "$T/report.json" >/dev/null || fail "not every run made it: $(jq -c '.sweeps[0].gates[0].pairs' "$T/report.json")"
# A store with damaged pages is refused at start, saying so, instead of being served until every
# commit fails: a consistent copy of this test's store with pages 2-4 (b-tree roots of the first
# tables) overwritten; `timeout` so that a coordinator which did start cannot hang the test.
sqlite3 "$T/sw.db" ".backup '$T/copy.db'"
sqlite3 "$T/copy.db" "PRAGMA journal_mode = DELETE" >/dev/null
pages=$(sqlite3 "$T/copy.db" "PRAGMA page_count")
[ "$pages" -gt 8 ] || fail "the store has only $pages pages"
dd if=/dev/urandom of="$T/copy.db" bs=4096 seek=1 count=3 conv=notrunc 2>/dev/null
set +e
timeout 20 "$SW" coordinator --bind-work "tcp://127.0.0.1:$((PORT + 5))" \
  --bind-control "tcp://127.0.0.1:$((PORT + 6))" --db "$T/copy.db" --insecure >"$T/damaged.out" 2>&1
rc=$?
set -e
[ $rc -ne 0 ] || fail "a coordinator served a damaged store"
# Found by the open (SQLite reads the damaged schema) or by the quick_check after it.
grep -Eq "is damaged \(PRAGMA quick_check|database disk image is malformed" "$T/damaged.out" ||
  fail "no clear message: $(cat "$T/damaged.out")"
echo "damaged store refused: $(tail -1 "$T/damaged.out" | cut -c1-200)"
echo PASS
