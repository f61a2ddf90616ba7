#!/usr/bin/env bash
# Integration (9): at-least-once delivery. The coordinator is killed (SIGKILL) while a worker's
# trainer runs; the worker spools the finished result, reconnects to the restarted coordinator
# (same database: the lease survives with a fresh deadline), resends it, and the sweep completes
# with every result acknowledged (the spool ends empty).
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
echo PASS
