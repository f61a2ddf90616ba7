#!/usr/bin/env bash
# Integration: a gate in which one run trains another model (issue 12's float-mode runaway: the
# fake trainer's first run reports 30% more splats and 12% more time). `splatsweep local` with
# the default rules: the gate engine's model-size check counts that run's pair as contaminated,
# the scheduler reruns the pair once before the gate concludes, the verdict stands on the others
# (the on arm is 5% faster: adopt), and the report names the run, in its tables and its charts.
. "$(dirname "$0")/lib.sh"
gate_spec "$T/gate.yaml" it-runaway 4 0.2 ", fake_runaway_file: $T/runaway"
DB="$T/db/sw.db"
"$SW" local "$T/gate.yaml" --workers 2 --db "$DB" --heartbeat-ms 200 >"$T/local.out" 2>"$T/local.log" ||
  fail "local exited $?"
cat "$T/local.out"
[ -e "$T/runaway" ] || fail "no run ran away (the fake trainer's marker is missing)"
"$SW" report --db "$DB" --format json >"$T/report.json" || fail "report failed"
g='.sweeps[0].gates[0]'
jq -e "$g.model_size.pairs_flagged >= 1 and $g.model_size.tolerance == 0.05" "$T/report.json" >/dev/null ||
  fail "the model-size check flagged nothing: $(jq -c "$g.model_size" "$T/report.json")"
idx=$(jq -r "[$g.model_size.flagged[] | select(.deviation > 0.25)][0].pair_index" "$T/report.json")
[ "$idx" != null ] || fail "no flagged run at +30%: $(jq -c "$g.model_size" "$T/report.json")"
jq -e "[$g.pairs[] | select(.is_replacement and .replaces == $idx)] | length == 1" "$T/report.json" >/dev/null ||
  fail "pair $idx has no replacement: $(jq -c "[$g.pairs[] | [.index, .is_replacement, .replaces]]" "$T/report.json")"
sqlite3 "$DB" "SELECT text FROM events WHERE kind = 'replace'" | grep -q "pair $idx trained a model of another size" ||
  fail "no replacement event for pair $idx: $(sqlite3 "$DB" "SELECT text FROM events WHERE kind = 'replace'")"
jq -e "$g.verdict == \"adopt\"" "$T/report.json" >/dev/null ||
  fail "verdict $(jq -r "$g.verdict" "$T/report.json"), expected adopt: $(jq -c "$g.reasons, $g.warnings" "$T/report.json")"
jq -e "[$g.warnings[] | select(test(\"model size: pair [0-9]+'s (off|on) run trained 6500\"))] | length >= 1" \
  "$T/report.json" >/dev/null || fail "no model-size warning: $(jq -c "$g.warnings" "$T/report.json")"
"$SW" report --db "$DB" >"$T/report.txt" || fail "text report failed"
grep -qE "model size \((off|on)\)" "$T/report.txt" || fail "the text report does not mark the run"
# The HTML report's charts mark the run too: in the per-pair chart the pair is a red cross, and
# in the per-arm chart that arm's dot of the pair is flagged (not only load-contaminated runs).
arm=$(jq -r "[$g.model_size.flagged[] | select(.pair_index == $idx)][0].arm" "$T/report.json")
"$SW" report --db "$DB" --format html -o "$T/report.html" || fail "HTML report failed"
charts='Object.values(Chart.instances)'
# Pairs with both runs that the chart should cross: a size-flagged or a contaminated run.
marked=$(jq "[$g.model_size.flagged[].pair_index] as \$f | [$g.pairs[] | select(.delta_pct != null)
  | select((.index as \$i | \$f | index(\$i)) or .off.contaminated or .on.contaminated)] | length" \
  "$T/report.json")
sets="$charts.map(c => c.data.datasets.map(d => [c, d])).flat()"
/usr/bin/python3 "$(dirname "$0")/browser_check.py" "file://$T/report.html" "$T/report.png" \
  --min-charts 6 --expect-js "$sets.some(([c, d]) => d.label === 'pair delta' &&
      d.pointStyle[c.data.labels.indexOf('pair $idx')] === 'crossRot')" \
  --expect-js "$sets.some(([c, d]) => d.label === '$arm runs' &&
      d.data.some(q => q.pair === $idx && q.flag))" \
  --expect-js "$sets.filter(([c, d]) => d.label === 'pair delta')[0][1].pointStyle
      .filter(s => s === 'crossRot').length === $marked" ||
  fail "the report's charts do not mark pair $idx's $arm run"
# The audit fails the series: one model size per configuration does not hold.
set +e
"$SW" audit --db "$DB" >"$T/audit.txt"
rc=$?
set -e
cat "$T/audit.txt"
[ $rc -eq 1 ] || fail "audit exit $rc, expected 1"
grep -qE "FAIL +model_size" "$T/audit.txt" || fail "the audit's model_size check did not fail"
echo PASS
