#!/usr/bin/env bash
# Integration (17): the load window is honest both ways, with the real trainer and the default
# contamination rules. `splatsweep local` runs two pairs of the builtin trainer on one worker;
# while the third run trains, this test keeps one core busy for 5 s with a shell loop (a foreign
# process, as a build or a browser would be). The idle runs must stay ok; the hogged run must be
# flagged contaminated on cpu_other, its pair re-run exactly once, and the original kept in the
# store and in the report with its label.
. "$(dirname "$0")/lib.sh"
[ -x "$BIN/splat-train" ] || fail "splat-train is not built beside splatsweep"
command -v sqlite3 >/dev/null || fail "this test needs the sqlite3 shell (apt-get install sqlite3)"
# One run lasts about 10 s with lavapipe on a 2-core machine: long enough that the 5 s hog
# started 1 s into it lies wholly inside the run.
cat >"$T/honest.yaml" <<YAML
name: it-honest
kind: gate
trainer:
  builtin: {}
scene:
  generate: {kind: bricks, train_views: 8, test_views: 2, resolution: 64, seed: 1}
base:
  iterations: 100
  seed: 42
  init_points: 2000
  densify_from: 50
  densify_until: 150
  densify_every: 50
  opacity_reset_every: 0
  save_ply: 0
arms:
  off: {radix_passes: full}
  on: {radix_passes: skip}
pairs: {n: 2, max: 2, order: alternate}
gate:
  metric: train_s
  direction: lower
  rule: {k: 2.0, floor: 0.01}
  guard: {metric: psnr_db, max_drop: 0.05}
# No contamination section: the default limits and the default 5 s settle window are what is
# under test.
YAML
DB="$T/db/sw.db"
q() { sqlite3 -separator ' ' "$DB" "$@"; }
start local "$SW" local "$T/honest.yaml" --workers 1 --db "$DB" --heartbeat-ms 200
runs_started() { grep -c 'attempt 1) started in' "$T/local.log"; }
third_run_started() { [ "$(runs_started)" -ge 3 ]; }
wait_until 100 third_run_started || fail "the third run did not start within 100 s"
sleep 1
HOG_START=$(date +%s%3N)
start hog timeout 5 sh -c 'while :; do :; done'
HOG_END=$((HOG_START + 5000))
echo "hog: one busy core from $HOG_START to $HOG_END (ms)"
local_done() { ! kill -0 "$PID_local"; }
wait_until 150 local_done || fail "splatsweep local did not finish within 150 s of the hog"
rc=0
wait "$PID_local" || rc=$?
[ $rc -eq 0 ] || fail "local exited $rc"

# Every attempt of a pair the gate planned (not a replacement), with its figures in the run.
ORIG="SELECT a.id, a.status, a.run_start_wall_ms, a.run_end_wall_ms, p.idx, r.arm
        FROM attempts a JOIN runs r ON r.id = a.run_id JOIN pairs p ON p.id = r.pair_id
       WHERE p.is_replacement = 0"
echo "runs (attempt pair arm status start_ms end_ms cpu_other during: max mean):"
q "SELECT a.id, p.idx, r.arm, a.status, a.run_start_wall_ms, a.run_end_wall_ms,
          printf('%.3f', MAX(w.cpu_other)), printf('%.3f', AVG(w.cpu_other)),
          CASE p.is_replacement WHEN 1 THEN 'replacement' ELSE 'original' END
     FROM attempts a JOIN runs r ON r.id = a.run_id JOIN pairs p ON p.id = r.pair_id
     LEFT JOIN windows w ON w.attempt_id = a.id AND w.phase = 'during'
    GROUP BY a.id ORDER BY a.run_start_wall_ms" | sed 's/^/  /'

n_orig=$(q "SELECT COUNT(*) FROM ($ORIG)")
[ "$n_orig" -eq 4 ] || fail "expected 4 original attempts (2 pairs x 2 arms), found $n_orig"
n_bad=$(q "SELECT COUNT(*) FROM ($ORIG) WHERE status = 'contaminated'")
[ "$n_bad" -eq 1 ] || fail "expected exactly 1 contaminated original attempt, found $n_bad"
read -r HOG_ATTEMPT HOG_PAIR HOG_RUN_START HOG_RUN_END < <(q "SELECT id, idx, run_start_wall_ms,
  run_end_wall_ms FROM ($ORIG) WHERE status = 'contaminated'")
REASON=$(q "SELECT flag_reason FROM attempts WHERE id = $HOG_ATTEMPT")
echo "hogged run: attempt $HOG_ATTEMPT of pair $HOG_PAIR, $HOG_RUN_START .. $HOG_RUN_END: $REASON"
case "$REASON" in *cpu_other*) ;; *) fail "the flag reason does not name cpu_other: '$REASON'" ;; esac
[ "$HOG_RUN_START" -le "$HOG_START" ] && [ "$HOG_START" -le "$HOG_RUN_END" ] ||
  fail "the contaminated run ($HOG_RUN_START .. $HOG_RUN_END) is not the one the hog ($HOG_START) overlapped"
others=$(q "SELECT COUNT(*) FROM ($ORIG) WHERE id <> $HOG_ATTEMPT AND status <> 'ok'")
[ "$others" -eq 0 ] || fail "idle original runs not ok: $(q "SELECT id, status FROM ($ORIG) WHERE status <> 'ok'" | tr '\n' ';')"
echo "idle original runs, max cpu_other during the run: $(q "SELECT a.id || ':' || printf('%.3f', MAX(w.cpu_other))
  FROM ($ORIG) a JOIN windows w ON w.attempt_id = a.id AND w.phase = 'during'
  WHERE a.id <> $HOG_ATTEMPT GROUP BY a.id" | tr '\n' ' ')"

n_repl=$(q "SELECT COUNT(*) FROM pairs WHERE is_replacement = 1")
[ "$n_repl" -eq 1 ] || fail "expected exactly 1 replacement pair, found $n_repl"
repl_of=$(q "SELECT replaces FROM pairs WHERE is_replacement = 1")
[ "$repl_of" = "$HOG_PAIR" ] || fail "the replacement pair replaces pair $repl_of, not the hogged pair $HOG_PAIR"
echo "replacement pair: $(q "SELECT 'idx ' || idx || ' replaces ' || replaces || ', ' || status FROM pairs WHERE is_replacement = 1")"

"$SW" report --db "$DB" --format json >"$T/report.json" || fail "report"
jq -e --argjson i "$HOG_PAIR" '.sweeps[0].gates[0].pairs[] | select(.index == $i) |
       .is_replacement == false and ([.off, .on] | map(select(.contaminated and .status == "contaminated")) | length) == 1' \
  "$T/report.json" >/dev/null ||
  fail "the report does not show pair $HOG_PAIR with one contaminated run: $(jq -c --argjson i "$HOG_PAIR" \
    '.sweeps[0].gates[0].pairs[] | select(.index == $i) | {index, off: .off.status, on: .on.status}' "$T/report.json")"
jq -e --argjson i "$HOG_PAIR" '.sweeps[0].gates[0].pairs | map(select(.replaces == $i and .is_replacement)) | length == 1' \
  "$T/report.json" >/dev/null || fail "the report does not show one replacement of pair $HOG_PAIR"
verdict=$(jq -r '.sweeps[0].gates[0].verdict' "$T/report.json")
case "$verdict" in adopt | reject | inconclusive) ;; *) fail "no verdict computed: '$verdict'" ;; esac
echo "verdict: $verdict; counts $(jq -c '.sweeps[0].gates[0].counts' "$T/report.json")"
echo PASS
