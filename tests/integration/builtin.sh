#!/usr/bin/env bash
# Integration (11): the builtin runner end to end: `splatsweep local` with `trainer: builtin`
# generates a scene with `splat-train scene` (in the worker's scene cache), runs `splat-train
# train --progress` found beside splatsweep for both arms of one pair, and stores real results
# (PSNR, scene and trainer hashes) with the progress the trainer printed.
. "$(dirname "$0")/lib.sh"
[ -x "$BIN/splat-train" ] || fail "splat-train is not built beside splatsweep"
cat >"$T/builtin.yaml" <<YAML
name: it-builtin
kind: gate
trainer:
  builtin: {}
scene:
  generate: {kind: bricks, train_views: 4, test_views: 2, resolution: 32, seed: 1}
base: {iterations: 20, seed: 42, init_points: 300, save_ply: 0}
arms:
  off: {radix_passes: full}
  on: {radix_passes: skip}
pairs: {n: 1, max: 1, order: alternate}
gate: {metric: train_s, direction: lower}
YAML
"$SW" local "$T/builtin.yaml" --workers 1 --db "$T/db/sw.db" --heartbeat-ms 200 >"$T/local.out" 2>"$T/local.log" ||
  fail "local exited $?"
cat "$T/local.out"
"$SW" report --db "$T/db/sw.db" --format json >"$T/report.json" || fail "report"
# The run's load window is judged by the default rules: a run flagged on evidence of load from
# outside (lib.sh expect_pairs) has its pair replaced once, and the replacement is checked.
expect_pairs "$T/db/sw.db" 1
jq -e '[.sweeps[0].gates[0].pairs[] | select(.off.status == "ok" and .on.status == "ok")][0] |
       .off.metrics.psnr_db > 0 and .on.metrics.iterations == 20 and
       (.off.scene_sha256 | length) == 64 and (.off.trainer_sha256 | length) == 64' "$T/report.json" >/dev/null ||
  fail "runs not stored as expected: $(jq -c '[.sweeps[0].gates[0].pairs[] | {off: .off.status, on: .on.status, m: .off.metrics, s: .off.scene_sha256}]' "$T/report.json")"
ls "$T"/db/local-workers/local-1/scenes/gen-*/transforms_train.json >/dev/null || fail "no generated scene in the cache"
echo PASS
