#!/usr/bin/env bash
# Integration (fault table, issue 11): a worker frozen (SIGSTOP) in the middle of a run for
# longer than its lease while its pair is run again and finished by another worker, then thawed
# (SIGCONT). Afterwards: the sweep has exactly its n pairs, none mixes workers or attempts, the
# thawed worker's late result is refused (or dropped by the worker itself, which sees it was cut
# off past the lease), nothing of the old attempt counts, and the thawed worker works on: it
# holds a session again and its spool ends empty.
# Heartbeats of 200 ms and a lease ttl of 2.5 s (from 60 s) so the freeze outlasts the lease in
# seconds; the contamination limits are the defaults.
. "$(dirname "$0")/lib.sh"
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
start coord "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" --insecure \
  --heartbeat-ms 200 --liveness 3 --lease-ttl-ms 2500
wait_until 15 status_json || fail "coordinator did not answer status"
# Two machines: each worker its own host measurement lock. (On one host the frozen worker would
# keep holding the shared lock and the other would rightly not measure beside it.)
start w1 "$SW" worker --coordinator "$WORK" --insecure --id w1 --work-dir "$T/w1" --heartbeat-ms 200 \
  --host-lock "$T/w1.lock"
start w2 "$SW" worker --coordinator "$WORK" --insecure --id w2 --work-dir "$T/w2" --heartbeat-ms 200 \
  --host-lock "$T/w2.lock"
gate_spec "$T/gate.yaml" it-sigstop 3 2
id=$("$SW" submit "$T/gate.yaml" --coordinator "$CTL") || fail "submit failed"
busy() {
  status_json >"$T/status.json" || return 1
  jq -e '[.coordinator.sessions[] | select(.lease > 0 and .run > 0)] | length >= 1' "$T/status.json"
}
wait_until 30 busy || fail "no worker ever ran anything"
victim=$(jq -r '[.coordinator.sessions[] | select(.lease > 0 and .run > 0)][0].id' "$T/status.json")
lease=$(jq -r --arg v "$victim" '.coordinator.sessions[] | select(.id == $v) | .lease' "$T/status.json")
if [ "$victim" = w1 ]; then pid=$PID_w1 survivor=w2; else pid=$PID_w2 survivor=w1; fi
echo "freezing $victim (pid $pid) during lease $lease"
kill -STOP "$pid"
# The lease expires, its pair goes to the survivor as attempt 2, and the sweep finishes.
done_() {
  status_json >"$T/status.json" || return 1
  jq -e '[.sweeps[] | select(.status == "running")] | length == 0' "$T/status.json"
}
wait_until 90 done_ || fail "sweep did not finish while $victim was frozen"
expired=$(sqlite3 "$T/sw.db" "SELECT state FROM leases WHERE id = $lease")
[ "$expired" = expired ] || fail "the frozen worker's lease $lease is '$expired', not expired"
before=$(sqlite3 "$T/sw.db" "SELECT COUNT(*) FROM attempts")
kill -CONT "$pid"
echo "thawed $victim"
back() {
  status_json >"$T/status.json" || return 1
  jq -e --arg v "$victim" '[.coordinator.sessions[] | select(.id == $v)] | length == 1' "$T/status.json"
}
wait_until 30 back || fail "$victim did not come back after SIGCONT"
empty() { ! ls "$T/$victim/spool/"*.msg >/dev/null 2>&1; }
wait_until 30 empty || fail "$victim's spool still holds $(ls "$T/$victim/spool/" | wc -l) result(s)"
after=$(sqlite3 "$T/sw.db" "SELECT COUNT(*) FROM attempts")
echo "attempts stored before the thaw: $before, after: $after; stale refused: $(jq '.coordinator.stale' "$T/status.json")"
# A late result of the expired attempt may be recorded for the audit, never as part of a pair.
late_ok=$(sqlite3 "$T/sw.db" "SELECT COUNT(*) FROM attempts a JOIN runs r ON r.id = a.run_id
  JOIN pairs p ON p.id = r.pair_id WHERE a.attempt < p.attempt AND a.status = 'ok'")
[ "$late_ok" -eq 0 ] || fail "$late_ok result(s) of an expired attempt stored as ok"
expect_pairs "$T/sw.db" 3
"$SW" report "$id" --db "$T/sw.db" --format json >"$T/report.json" || fail "report failed"
jq -e '[.sweeps[0].gates[0].pairs[] | .off.attempt == .on.attempt and
        .off.worker == .worker and .on.worker == .worker] | all' \
  "$T/report.json" >/dev/null || fail "a pair mixes workers or attempts"
jq -e --arg s "$survivor" '[.sweeps[0].gates[0].pairs[] | select(.off.attempt > 1 and .worker == $s)] | length >= 1' \
  "$T/report.json" >/dev/null || fail "the frozen worker's pair was not completed by $survivor"
grep -E "cut off|stale|dropped" "$T/$victim.log" | tail -3
echo PASS
