#!/usr/bin/env bash
# Integration (10): placement rules reach the scheduler through the worker's Hello: a spec that
# matches `label.site: b*` runs only on the worker started with `--label site=basement`, and a
# sweep pinned to a worker id runs only there; the fingerprint (host, cores, memory) is stored.
. "$(dirname "$0")/lib.sh"
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
start coord "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" --insecure --heartbeat-ms 200
wait_until 15 status_json || fail "coordinator did not answer status"
start w1 "$SW" worker --coordinator "$WORK" --insecure --id w1 --work-dir "$T/w1" --heartbeat-ms 200 --label site=attic
start w2 "$SW" worker --coordinator "$WORK" --insecure --id w2 --work-dir "$T/w2" --heartbeat-ms 200 --label site=basement
both() { status_json >"$T/status.json" && jq -e '(.coordinator.sessions | length) == 2' "$T/status.json"; }
wait_until 15 both || fail "workers did not join"
gate_spec "$T/match.yaml" it-match 3 0.1
printf 'placement: {spread: true, match: {label.site: "b*"}}\n' >>"$T/match.yaml"
gate_spec "$T/pin.yaml" it-pin 2 0.1
printf 'placement: {pin: w1}\n' >>"$T/pin.yaml"
"$SW" check "$T/match.yaml" >/dev/null || fail "match spec refused"
"$SW" check "$T/pin.yaml" >/dev/null || fail "pin spec refused"
m=$("$SW" submit "$T/match.yaml" --coordinator "$CTL") || fail "submit match"
p=$("$SW" submit "$T/pin.yaml" --coordinator "$CTL") || fail "submit pin"
done_() { status_json >"$T/status.json" && jq -e '[.sweeps[] | select(.status == "running")] | length == 0' "$T/status.json"; }
wait_until 60 done_ || fail "sweeps did not finish"
"$SW" report "$m" --db "$T/sw.db" --format json >"$T/m.json"
"$SW" report "$p" --db "$T/sw.db" --format json >"$T/p.json"
jq -e '[.sweeps[0].gates[0].pairs[].worker] | unique == ["w2"]' "$T/m.json" >/dev/null ||
  fail "label match not honoured: $(jq -c '[.sweeps[0].gates[0].pairs[].worker]' "$T/m.json")"
jq -e '[.sweeps[0].gates[0].pairs[].worker] | unique == ["w1"]' "$T/p.json" >/dev/null ||
  fail "pin not honoured: $(jq -c '[.sweeps[0].gates[0].pairs[].worker]' "$T/p.json")"
fp=$(sqlite3 "$T/sw.db" "SELECT fingerprint_json FROM workers WHERE id = 'w2'")
echo "$fp" | jq -e '.hostname != "" and .cores > 0 and .mem_bytes > 0 and .worker_id == "w2"' >/dev/null ||
  fail "fingerprint not stored: $fp"
echo PASS
