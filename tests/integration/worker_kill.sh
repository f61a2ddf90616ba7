#!/usr/bin/env bash
# Integration (3): SIGKILL of a worker in the middle of a run: its pair is re-queued when the
# lease expires and completed by the other worker; no pair in the report mixes runs of two
# workers or two attempts.
. "$(dirname "$0")/lib.sh"
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
start coord "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" --insecure \
  --heartbeat-ms 200 --liveness 3 --lease-ttl-ms 2500
wait_until 15 status_json || fail "coordinator did not answer status"
start w1 "$SW" worker --coordinator "$WORK" --insecure --id w1 --work-dir "$T/w1" --heartbeat-ms 200
start w2 "$SW" worker --coordinator "$WORK" --insecure --id w2 --work-dir "$T/w2" --heartbeat-ms 200
gate_spec "$T/gate.yaml" it-kill 3 2
id=$("$SW" submit "$T/gate.yaml" --coordinator "$CTL") || fail "submit failed"
# Kill whichever worker is in the middle of a run; the other one must finish its pair.
busy() {
  status_json >"$T/status.json" || return 1
  jq -e '[.coordinator.sessions[] | select(.lease > 0 and .run > 0)] | length >= 1' "$T/status.json"
}
wait_until 30 busy || fail "no worker ever ran anything"
victim=$(jq -r '[.coordinator.sessions[] | select(.lease > 0 and .run > 0)][0].id' "$T/status.json")
lease=$(jq -r --arg v "$victim" '.coordinator.sessions[] | select(.id == $v) | .lease' "$T/status.json")
if [ "$victim" = w1 ]; then pid=$PID_w1 survivor=w2; else pid=$PID_w2 survivor=w1; fi
echo "killing $victim (pid $pid) during lease $lease"
kill -KILL "$pid"
done_() {
  status_json >"$T/status.json" || return 1
  jq -e '[.sweeps[] | select(.status == "running")] | length == 0' "$T/status.json"
}
wait_until 90 done_ || fail "sweep did not finish after the kill"
"$SW" report "$id" --db "$T/sw.db" --format json >"$T/report.json" || fail "report failed"
jq -c '[.sweeps[0].gates[0].pairs[] | {index, worker, order, a_off: .off.attempt, a_on: .on.attempt}]' "$T/report.json"
jq -e '[.sweeps[0].gates[0].pairs[]] | length == 3' "$T/report.json" >/dev/null || fail "expected 3 pairs"
jq -e '[.sweeps[0].gates[0].pairs[] | .off.attempt == .on.attempt and
        .off.worker == .worker and .on.worker == .worker] | all' \
  "$T/report.json" >/dev/null || fail "a pair mixes workers or attempts"
jq -e --arg s "$survivor" '[.sweeps[0].gates[0].pairs[] | select(.off.attempt > 1 and .worker == $s)] | length >= 1' \
  "$T/report.json" >/dev/null || fail "no re-queued pair was completed by $survivor"
jq -e '[.sweeps[0].gates[0].pairs[] | .off.status, .on.status] | all(. == "ok")' "$T/report.json" >/dev/null ||
  fail "runs in the report that are not ok"
echo PASS
