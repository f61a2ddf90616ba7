#!/usr/bin/env bash
# Integration (12): `splatsweep cancel SWEEP` stops the sweep: its running trainer is stopped
# (Cancel -> SIGTERM to the trainer's process group), nothing more is assigned, and the worker
# is free for other work.
. "$(dirname "$0")/lib.sh"
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
start coord "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" --insecure --heartbeat-ms 200
wait_until 15 status_json || fail "coordinator did not answer status"
start w1 "$SW" worker --coordinator "$WORK" --insecure --id w1 --work-dir "$T/w1" --heartbeat-ms 200
gate_spec "$T/long.yaml" it-cancel 3 60
id=$("$SW" submit "$T/long.yaml" --coordinator "$CTL") || fail "submit"
trainer_running() { [ -n "$(trainer_pids "$T/w1/runs/")" ]; }
wait_until 30 trainer_running || fail "the trainer never started"
"$SW" cancel "$id" --coordinator "$CTL" || fail "cancel failed"
trainer_gone() { ! trainer_running; }
wait_until 15 trainer_gone || fail "the trainer still runs after cancel"
status_json >"$T/status.json"
jq -e --argjson id "$id" '[.sweeps[] | select(.id == $id and .status == "running")] | length == 0' \
  "$T/status.json" >/dev/null || fail "sweep still running: $(jq -c .sweeps "$T/status.json")"
# The worker takes other work at once.
gate_spec "$T/short.yaml" it-after-cancel 1 0.1
id2=$("$SW" submit "$T/short.yaml" --coordinator "$CTL") || fail "submit 2"
done_() { status_json >"$T/status.json" && jq -e '[.sweeps[] | select(.status == "running")] | length == 0' "$T/status.json"; }
wait_until 30 done_ || fail "the next sweep did not run after the cancel"
set +e
"$SW" cancel 999 --coordinator "$CTL" >"$T/cancel999.out" 2>&1
rc=$?
set -e
[ $rc -ne 0 ] || fail "cancelling an unknown sweep succeeded"
echo PASS
