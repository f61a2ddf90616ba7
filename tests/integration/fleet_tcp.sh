#!/usr/bin/env bash
# Integration (2): coordinator and two workers as separate processes over tcp on loopback
# complete a submitted sweep; `status --format json` shows the workers and the progress while
# it runs, and the report through the control endpoint lists every pair.
. "$(dirname "$0")/lib.sh"
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
start coord "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" --insecure --heartbeat-ms 200
wait_until 15 status_json || fail "coordinator did not answer status"
start w1 "$SW" worker --coordinator "$WORK" --insecure --id w1 --work-dir "$T/w1" --heartbeat-ms 200
start w2 "$SW" worker --coordinator "$WORK" --insecure --id w2 --work-dir "$T/w2" --heartbeat-ms 200
gate_spec "$T/gate.yaml" it-fleet 4 0.8
id=$("$SW" submit "$T/gate.yaml" --coordinator "$CTL") || fail "submit failed"
echo "submitted sweep $id"
running() {
  status_json >"$T/status.json" || return 1
  jq -e '(.coordinator.sessions | length) == 2 and
         ([.coordinator.sessions[] | select(.lease > 0)] | length) >= 1 and
         ([.sweeps[] | select(.status == "running")] | length) == 1' "$T/status.json"
}
wait_until 30 running || fail "status never showed two workers with work in progress: $(cat "$T/status.json")"
echo "while running:"
jq -c '{workers: [.coordinator.sessions[] | {id, lease, run, iter}], sweeps: [.sweeps[] | {id, status, gates: [.gates[] | .pairs]}]}' "$T/status.json"
done_() {
  status_json >"$T/status.json" || return 1
  jq -e '[.sweeps[] | select(.status == "running")] | length == 0' "$T/status.json"
}
wait_until 60 done_ || fail "sweep did not finish"
"$SW" report "$id" --coordinator "$CTL" --format json >"$T/report.json" || fail "report through the control endpoint failed"
expect_pairs "$T/sw.db" 4
n=$(jq -r '[.sweeps[0].gates[0].pairs[].worker] | unique | length' "$T/report.json")
[ "$n" = 2 ] || fail "pairs were not spread over both workers ($n)"
echo "verdict: $(jq -r '.sweeps[0].gates[0].verdict' "$T/report.json")"
# The other formats through the control endpoint, and the terminal status.
"$SW" report "$id" --coordinator "$CTL" --format html -o "$T/report.html" || fail "html report"
grep -qi "<html" "$T/report.html" || fail "html report has no page"
"$SW" report "$id" --coordinator "$CTL" --format md >"$T/report.md" || fail "md report"
grep -q "it-fleet" "$T/report.md" || fail "md report lacks the gate"
"$SW" status --coordinator "$CTL" >"$T/status.txt" || fail "text status"
grep -q "sweep $id it-fleet" "$T/status.txt" || fail "text status: $(cat "$T/status.txt")"
grep -q "^worker w1" "$T/status.txt" || fail "text status lacks the workers"
echo PASS
