#!/usr/bin/env bash
# Integration (18): more local workers than cores. `splatsweep local --workers 3` on a 2-core
# machine with the real trainer and the default contamination rules: the workers take the host
# measurement lock in turn, so no two runs overlap and none is flagged (no worker is another's
# foreign load), the gate runs exactly the planned pairs with no replacement, the pairs are spread
# over the workers, and the gate counts the machine once.
. "$(dirname "$0")/lib.sh"
[ -x "$BIN/splat-train" ] || fail "splat-train is not built beside splatsweep"
command -v sqlite3 >/dev/null || fail "this test needs the sqlite3 shell (apt-get install sqlite3)"
# One run lasts about 4 s with lavapipe on a 2-core machine.
cat >"$T/three.yaml" <<YAML
name: it-three-local
kind: gate
trainer:
  builtin: {}
scene:
  generate: {kind: bricks, train_views: 8, test_views: 2, resolution: 64, seed: 1}
base:
  iterations: 40
  seed: 42
  init_points: 2000
  densify_from: 10
  densify_until: 30
  densify_every: 10
  opacity_reset_every: 0
  save_ply: 0
arms:
  off: {radix_passes: full}
  on: {radix_passes: skip}
pairs: {n: 3, max: 3, order: alternate}
gate:
  metric: train_s
  direction: lower
  rule: {k: 2.0, floor: 0.01}
  guard: {metric: psnr_db, max_drop: 0.05}
# No contamination section: the default limits and the default 5 s settle window hold here, with
# three workers sharing two cores.
YAML
DB="$T/db/sw.db"
q() { sqlite3 -separator ' ' "$DB" "$@"; }
start local "$SW" local "$T/three.yaml" --workers 3 --db "$DB" --heartbeat-ms 200
local_done() { ! kill -0 "$PID_local"; }
wait_until 150 local_done || fail "splatsweep local did not finish within 150 s"
rc=0
wait "$PID_local" || rc=$?
[ $rc -eq 0 ] || fail "local exited $rc"

echo "runs by start (attempt worker pair arm status start_ms end_ms gap_ms cpu_other during: max mean):"
q "SELECT a.id, a.worker_id, p.idx, r.arm, a.status, a.run_start_wall_ms, a.run_end_wall_ms,
          a.run_start_wall_ms - LAG(a.run_end_wall_ms) OVER (ORDER BY a.run_start_wall_ms),
          printf('%.3f', (SELECT MAX(cpu_other) FROM windows w WHERE w.attempt_id = a.id AND w.phase = 'during')),
          printf('%.3f', (SELECT AVG(cpu_other) FROM windows w WHERE w.attempt_id = a.id AND w.phase = 'during'))
     FROM attempts a JOIN runs r ON r.id = a.run_id JOIN pairs p ON p.id = r.pair_id
    ORDER BY a.run_start_wall_ms" | sed 's/^/  /'

# Exactly the 3 planned pairs, every flagged run backed by evidence and replaced once (lib.sh).
expect_pairs "$DB" 3
n_att=$(q "SELECT COUNT(*) FROM attempts")
n_pairs=$(q "SELECT COUNT(*) FROM pairs")
[ "$n_att" -eq $((2 * n_pairs)) ] || fail "expected $((2 * n_pairs)) attempts (2 arms per pair), found $n_att"
missing=$(q "SELECT COUNT(*) FROM attempts WHERE run_start_wall_ms IS NULL OR run_end_wall_ms IS NULL")
[ "$missing" -eq 0 ] || fail "$missing attempt(s) without a run interval"
overlaps=$(q "SELECT COUNT(*) FROM (SELECT run_start_wall_ms AS s,
                LAG(run_end_wall_ms) OVER (ORDER BY run_start_wall_ms) AS prev_end FROM attempts)
              WHERE prev_end IS NOT NULL AND s < prev_end")
[ "$overlaps" -eq 0 ] || fail "$overlaps run(s) started before the previous run ended"
echo "pairs by worker: $(q "SELECT idx || ':' || worker_id FROM pairs ORDER BY idx" | tr '\n' ' ')"
n_workers=$(q "SELECT COUNT(DISTINCT worker_id) FROM pairs")
[ "$n_workers" -gt 1 ] || fail "all pairs ran on one worker; expected them spread over the three"

"$SW" report --db "$DB" --format json >"$T/report.json" || fail "report"
gate='.sweeps[0].gates[0]'
jq -e "$gate.machines | length == 1" "$T/report.json" >/dev/null ||
  fail "the gate counts $(jq "$gate.machines | length" "$T/report.json") machines, not 1"
jq -e "$gate.reasons | any(startswith(\"lab rule: \")) and all(test(\"across [0-9]+ machines|over [0-9]+ machines\") | not)" \
  "$T/report.json" >/dev/null || fail "the gate's reasons do not count one machine: $(jq -c "$gate.reasons" "$T/report.json")"
echo "gate: $(jq -r "$gate.verdict" "$T/report.json"), machines $(jq -c "[$gate.machines[] | {id, n}]" "$T/report.json")"
echo "  $(jq -r "$gate.reasons[] | select(startswith(\"lab rule\"))" "$T/report.json")"
echo PASS
