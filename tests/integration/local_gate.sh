#!/usr/bin/env bash
# Integration (1): `splatsweep local SPEC --workers 3` with the exec runner and the fake trainer
# completes a 5-pair gate and prints the verdict; `report --format json` lists exactly 5 pairs
# (plus a replacement for each pair a foreign load rightly flagged: see expect_pairs), each with
# both runs on one worker, orders alternating.
. "$(dirname "$0")/lib.sh"
gate_spec "$T/gate.yaml" it-local 5 0.2
DB="$T/db/sw.db"
"$SW" local "$T/gate.yaml" --workers 3 --db "$DB" --heartbeat-ms 200 >"$T/local.out" 2>"$T/local.log" ||
  fail "local exited $?"
cat "$T/local.out"
grep -qiE "adopt|reject|inconclusive" "$T/local.out" || fail "no verdict printed"
"$SW" report --db "$DB" --format json >"$T/report.json" || fail "report failed"
jq -e '.sweeps | length == 1' "$T/report.json" >/dev/null || fail "expected one sweep"
expect_pairs "$DB" 5
# Both runs of every pair on the pair's worker, one attempt, and orders alternating by index.
jq -e '[.sweeps[0].gates[0].pairs[] | .off.worker == .worker and .on.worker == .worker
        and .off.attempt == .on.attempt] | all' "$T/report.json" >/dev/null || fail "a pair mixes workers or attempts"
jq -e '[.sweeps[0].gates[0].pairs | sort_by(.index) | .[:5] | .[] | .order] == ["off-on","on-off","off-on","on-off","off-on"]' \
  "$T/report.json" >/dev/null || fail "orders not alternating: $(jq -c '[.sweeps[0].gates[0].pairs[] | [.index, .order]]' "$T/report.json")"
jq -e '.sweeps[0].gates[0].verdict | test("adopt|reject|inconclusive")' "$T/report.json" >/dev/null || fail "no verdict in JSON"
# LAB-PRACTICE rule 4: the worker's load sampler recorded every run (a pre-run window and samples
# during the run).
jq -e '[.sweeps[0].gates[0].pairs[] | .off, .on | (.status == "ok" or .status == "contaminated") and .window.pre.n >= 1
        and .window.during.n >= 1] | all' "$T/report.json" >/dev/null ||
  fail "a run without load-window samples: $(jq -c '[.sweeps[0].gates[0].pairs[] | .off, .on | [.status, .window]]' "$T/report.json")"
workers=$(jq -r '[.sweeps[0].gates[0].pairs[].worker] | unique | length' "$T/report.json")
echo "pairs spread over $workers worker(s); verdict: $(jq -r '.sweeps[0].gates[0].verdict' "$T/report.json")"
# A bad spec: exit 2, and nothing reaches the store.
printf 'name: x\nkind: gate\nbogus_key: 1\n' >"$T/bad.yaml"
set +e
mkdir -p "$T/db2"
"$SW" local "$T/bad.yaml" --workers 1 --db "$T/db2/sw.db" >"$T/bad.out" 2>&1
rc=$?
set -e
[ $rc -eq 2 ] || fail "bad spec: exit $rc, expected 2"
[ ! -e "$T/db2/sw.db" ] || fail "a bad spec created a database"
echo PASS
