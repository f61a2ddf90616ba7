#!/usr/bin/env bash
# Session 28, call A: the rasterize forward walks a dense tile's splats one after another, so
# its time follows the longest walk, not the work (4 Dec: two pixels per invocation, half the
# walks in parallel, was slower). Three bit-exact changes shorten that walk or start it sooner:
# `fwd_step: group` (group8: 8) computes the alphas of the next four splats before compositing
# them in order; `fwd_stage: prefetch` loads the next batch's splats into registers before walking
# this one; `fwd_order: dense_first` starts the tiles with the most pairs first. Ours trains the
# 30,000-iteration recipe with all three (checkpoints at 7,000 and 30,000 as PLY); then the
# iteration benchmark in turn twice over the configurations on random 400k / 1M and both
# checkpoints replayed, the tile and run stats of both replays, and splatsweep's gate of
# group + prefetch (sweeps/gate-fwd-step-group.yaml at 7,000 iterations, 3 pairs, default rules).
# gsplat runs in call B (its build would idle the GPU here).
set -uo pipefail
. .data/pre.sh
export SW_DATASETS=/tmp/ds
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=/tmp/ds/nerf_synthetic_lego
timeout 150 $B/splat-train train --scene $S --out /tmp/ck --set iterations=30000 --set checkpoints=7000,30000 \
  --set checkpoint_ply=1 --set save_ply=0 --set fwd_step=group --set fwd_stage=prefetch --set fwd_order=dense_first >$OUT/train-group.log 2>&1
tail -n 1 $OUT/train-group.log
echo "checkpoints at $SECONDS s"; ls /tmp/ck
for rep in 1 2; do
  for c in "--fwd-step branch" "--fwd-step group" "--fwd-stage prefetch" "--fwd-order dense_first" \
      "--fwd-step group --fwd-stage prefetch" "--fwd-step group --fwd-stage prefetch --fwd-order dense_first" \
      "--fwd-step group8 --fwd-stage prefetch --fwd-order dense_first"; do
    timeout 60 $B/iter_bench --n 400000,1000000 $c
    for k in 7000 30000; do timeout 40 $B/iter_bench --ply /tmp/ck/checkpoint-$k.ply --scene $S $c; done
  done
done >$OUT/iter-ab.txt 2>&1
echo "ours done at $SECONDS s"
for k in 7000 30000; do
  timeout 40 $B/iter_bench --ply /tmp/ck/checkpoint-$k.ply --scene $S --iters 20 --warmup 5 --run-stats
done >$OUT/run-stats.txt 2>&1; grep -h "tile stats\|run stats" $OUT/run-stats.txt | cut -c1-240
grep -h "fwd step\|N =\|rasterize_fwd" $OUT/iter-ab.txt | sed -e 's/^device: .*fwd step/fwd step/' | cut -c1-150
PATH=$B:$PATH timeout $((590 - SECONDS)) bash bench/lab-gates.sh $B $OUT/gates 7000 3 fwd-step-group 2>&1
echo "gate done at $SECONDS s"; rm -rf $OUT/gates/local-workers
