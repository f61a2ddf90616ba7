#!/usr/bin/env bash
# Integration (8): a worker cut off from the coordinator for longer than its lease kills its
# trainer child; once the coordinator is back the worker says Hello again and the pair completes.
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
# Which attempt completes it depends on what the coordinator saw first when it woke: its tick
# (the lease expired: attempt 2) or the heartbeats the worker had queued before the cut-off
# (they renew the lease, which the worker's next Ready then gets back: attempt 1 again, no
# attempt lost to the churn). Either way both runs of the pair are ok under one attempt.
jq -e '.sweeps[0].gates[0].pairs | length == 1 and (.[0] | .on.attempt == .off.attempt and
       .off.status == "ok" and .on.status == "ok" and .worker == "w1")' \
  "$T/report.json" >/dev/null || fail "the pair was not completed: $(jq -c '.sweeps[0].gates[0].pairs' "$T/report.json")"
echo "completed as attempt $(jq '.sweeps[0].gates[0].pairs[0].off.attempt' "$T/report.json")"
echo PASS
