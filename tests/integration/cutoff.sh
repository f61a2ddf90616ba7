#!/usr/bin/env bash
# Integration (8): a worker cut off from the coordinator for longer than its lease kills its
# trainer child (the coordinator has re-queued the pair by then); once the coordinator is back
# the worker says Hello again and the pair completes as attempt 2.
. "$(dirname "$0")/lib.sh"
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
start coord "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" --insecure \
  --heartbeat-ms 200 --liveness 3 --lease-ttl-ms 1500
wait_until 15 status_json || fail "coordinator did not answer status"
start w1 "$SW" worker --coordinator "$WORK" --insecure --id w1 --work-dir "$T/w1" --heartbeat-ms 200
gate_spec "$T/gate.yaml" it-cutoff 1 6
id=$("$SW" submit "$T/gate.yaml" --coordinator "$CTL") || fail "submit failed"
trainer_running() { [ -n "$(trainer_pids "$T/w1/runs/")" ]; }
wait_until 30 trainer_running || fail "the trainer never started"
# Freeze the coordinator: the worker hears nothing for longer than the lease ttl.
kill -STOP "$PID_coord"
trainer_gone() { ! trainer_running; }
if ! wait_until 6 trainer_gone; then
  kill -CONT "$PID_coord"
  fail "the trainer still runs after the worker was cut off longer than its lease"
fi
kill -CONT "$PID_coord"
grep -q "killing the trainer" "$T/w1.log" || fail "the worker did not say why it stopped the trainer"
done_() {
  status_json >"$T/status.json" || return 1
  jq -e '[.sweeps[] | select(.status == "running")] | length == 0' "$T/status.json"
}
wait_until 60 done_ || fail "the sweep did not finish after the coordinator came back"
"$SW" report "$id" --db "$T/sw.db" --format json >"$T/report.json" || fail "report"
jq -e '.sweeps[0].gates[0].pairs[0] | .off.attempt >= 2 and .on.attempt == .off.attempt and .worker == "w1"' \
  "$T/report.json" >/dev/null || fail "the pair was not completed as a later attempt: $(jq -c '.sweeps[0].gates[0].pairs' "$T/report.json")"
echo PASS
