#!/usr/bin/env bash
# Integration (13): a trainer that always fails (exit 3, device error) makes every pair poison
# after --max-attempts; the sweep still ends (failed), `local` exits 0 and the report shows the
# failed runs with the trainer's reason.
. "$(dirname "$0")/lib.sh"
gate_spec "$T/poison.yaml" it-poison 2 0.05 ", fake_exit: 3"
"$SW" local "$T/poison.yaml" --workers 2 --db "$T/db/sw.db" --heartbeat-ms 200 --max-attempts 2 \
  >"$T/local.out" 2>"$T/local.log" || fail "local exited $? on a failing sweep"
cat "$T/local.out"
"$SW" report --db "$T/db/sw.db" --format json >"$T/report.json" || fail "report"
jq -e '[.sweeps[0].gates[0].pairs[] | .status == "failed" and .attempt == 2] | all and length == 2' \
  "$T/report.json" >/dev/null || fail "pairs not failed after 2 attempts: $(jq -c '[.sweeps[0].gates[0].pairs[] | {status, attempt}]' "$T/report.json")"
[ "$(sqlite3 "$T/db/sw.db" "SELECT status FROM sweeps")" = failed ] || fail "sweep not marked failed"
sqlite3 "$T/db/sw.db" "SELECT error_text FROM attempts" | grep -q "exit 3 (device error)" ||
  fail "the trainer's failure is not in the store"
echo PASS
