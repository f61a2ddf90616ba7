#!/usr/bin/env bash
# Integration (6): two sweeps submitted together both progress: when the first one finishes,
# the other has completed pairs too (neither starves).
. "$(dirname "$0")/lib.sh"
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
start coord "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" --insecure --heartbeat-ms 200
wait_until 15 status_json || fail "coordinator did not answer status"
gate_spec "$T/a.yaml" it-sweep-a 4 0.3
gate_spec "$T/b.yaml" it-sweep-b 4 0.3
a=$("$SW" submit "$T/a.yaml" --coordinator "$CTL") || fail "submit a"
b=$("$SW" submit "$T/b.yaml" --coordinator "$CTL") || fail "submit b"
start w1 "$SW" worker --coordinator "$WORK" --insecure --id w1 --work-dir "$T/w1" --heartbeat-ms 200
start w2 "$SW" worker --coordinator "$WORK" --insecure --id w2 --work-dir "$T/w2" --heartbeat-ms 200
one_done() {
  status_json >"$T/status.json" || return 1
  jq -e '[.sweeps[] | select(.status != "running")] | length >= 1' "$T/status.json"
}
wait_until 60 one_done || fail "no sweep finished"
jq -c '[.sweeps[] | {id, status, pairs: [.gates[].pairs]}]' "$T/status.json"
# Neither starves: when the first sweep ends, the other has been served too (a pair leased or
# done); a first-come-first-served queue would have handed every pair of the first sweep out
# before any of the second.
jq -e '[.sweeps[] | [.gates[].pairs | .done + .leased] | add] | all(. >= 1)' "$T/status.json" >/dev/null ||
  fail "one sweep finished while the other was never served (starved)"
all_done() {
  status_json >"$T/status.json" || return 1
  jq -e '[.sweeps[] | select(.status == "running")] | length == 0' "$T/status.json"
}
wait_until 60 all_done || fail "the second sweep did not finish"
# The order leases were issued in, by sweep: served in turn, so both appear among the first
# three leases (timing-independent, unlike the counts above).
first=$(sqlite3 "$T/sw.db" "SELECT p.sweep_id FROM leases l JOIN pairs p ON p.id = l.pair_id ORDER BY l.id LIMIT 3" | sort -u | wc -l)
[ "$first" = 2 ] || fail "the first three leases went to one sweep: $(sqlite3 "$T/sw.db" "SELECT p.sweep_id FROM leases l JOIN pairs p ON p.id = l.pair_id ORDER BY l.id" | tr '\n' ' ')"
echo PASS
