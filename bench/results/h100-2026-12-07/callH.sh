#!/usr/bin/env bash
# Session 26, call H: call G cut to fit the device time left after its failed starts (about
# 200 s): no gsplat, no 30k checkpoint. Ours trains the 7,000-iteration recipe with
# fwd_cull: rows (checkpoint PLY at 7,000), then the iteration benchmark off / rows / rows with
# project_sh: vec4 (and with bwd_step: dot, session 27) in turn twice on random 400k / 1M and the
# checkpoint replayed, then
# splatsweep's gate of fwd_cull: rows (sweeps/gate-fwd-cull-rows.yaml, 7,000 iterations, 3 pairs,
# default rules).
set -uo pipefail
. .data/pre.sh
export SW_DATASETS=/tmp/ds
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=/tmp/ds/nerf_synthetic_lego
timeout 60 $B/splat-train train --scene $S --out /tmp/ck --set iterations=7000 --set checkpoints=7000 \
  --set checkpoint_ply=1 --set save_ply=0 --set fwd_cull=rows >$OUT/train-rows.log 2>&1; tail -n 1 $OUT/train-rows.log
for rep in 1 2; do
  for c in "--fwd-cull off" "--fwd-cull rows" "--fwd-cull rows --project-sh vec4" \
      "--fwd-cull rows --project-sh vec4 --bwd-step dot"; do
    timeout 60 $B/iter_bench --n 400000,1000000 $c
    timeout 40 $B/iter_bench --ply /tmp/ck/checkpoint-7000.ply --scene $S $c
  done
done >$OUT/iter-ab.txt 2>&1
echo "ours done at $SECONDS s"
grep -h "fwd cull\|N =\|rasterize_fwd\|rasterize_bwd\|project_fwd" $OUT/iter-ab.txt | sed -e 's/^device: .*fwd cull/fwd cull/' | cut -c1-200
PATH=$B:$PATH timeout $((400 - SECONDS)) bash bench/lab-gates.sh $B $OUT/gates 7000 3 fwd-cull-rows bwd-step-dot 2>&1
echo "gate done at $SECONDS s"
