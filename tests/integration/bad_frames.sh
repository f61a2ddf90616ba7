#!/usr/bin/env bash
# Integration (5): malformed and oversized frames sent to both endpoints are dropped and counted
# (counters in `status --format json`), an unknown protocol version gets Reject, and the
# coordinator keeps serving: a worker then completes a sweep.
. "$(dirname "$0")/lib.sh"
POKE="$BIN/frame_poke"
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
start coord "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" --insecure --heartbeat-ms 200
wait_until 15 status_json || fail "coordinator did not answer status"
for ep in "$WORK" "$CTL"; do
  "$POKE" "$ep" garbage 200 || fail "garbage to $ep"
  "$POKE" "$ep" multipart || fail "multipart to $ep"
  "$POKE" "$ep" badversion || fail "no Reject(protocol) from $ep"
  "$POKE" "$ep" oversize || fail "oversize to $ep"
done
"$POKE" "$WORK" nohello || fail "no Reject(unknown) for Ready without Hello"
sleep 0.5
status_json >"$T/status.json" || fail "coordinator stopped answering"
jq -c '.coordinator | {work, control}' "$T/status.json"
# Garbage frames that happen to decode are impossible to rule out entirely, so at least most of
# the 200 must be dropped; the multipart and bad-version frames always are.
jq -e '.coordinator.work.dropped >= 150 and .coordinator.control.dropped >= 150' "$T/status.json" >/dev/null ||
  fail "malformed frames not counted"
jq -e '.coordinator.work.bad_protocol >= 1 and .coordinator.control.bad_protocol >= 1' "$T/status.json" >/dev/null ||
  fail "bad protocol versions not counted"
jq -e '.coordinator.work.disconnects >= 1' "$T/status.json" >/dev/null ||
  fail "the oversized frame's connection was not dropped"
start w1 "$SW" worker --coordinator "$WORK" --insecure --id w1 --work-dir "$T/w1" --heartbeat-ms 200
gate_spec "$T/gate.yaml" it-frames 2 0.1
id=$("$SW" submit "$T/gate.yaml" --coordinator "$CTL") || fail "submit after the abuse failed"
done_() {
  status_json >"$T/status.json" || return 1
  jq -e '[.sweeps[] | select(.status == "running")] | length == 0' "$T/status.json"
}
wait_until 60 done_ || fail "sweep did not finish after the abuse"
echo PASS
