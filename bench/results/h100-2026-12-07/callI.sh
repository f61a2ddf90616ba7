#!/usr/bin/env bash
# Session 26, call I: call H cut again for the last device time (about 240 s): no gate. Ours
# trains the 7,000-iteration recipe with fwd_cull: rows (checkpoint PLY at 7,000), then the
# iteration benchmark off / rows / rows with project_sh: vec4 / those with bwd_step: dot (session
# 27) / off on random 400k / 1M and the
# checkpoint replayed (A B C A, so drift shows).
set -uo pipefail
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=/tmp/ds/nerf_synthetic_lego
timeout 40 $B/splat-train train --scene $S --out /tmp/ck --set iterations=7000 --set checkpoints=7000 \
  --set checkpoint_ply=1 --set save_ply=0 --set fwd_cull=rows >$OUT/train-rows.log 2>&1; tail -n 1 $OUT/train-rows.log
for c in "--fwd-cull off" "--fwd-cull rows" "--fwd-cull rows --project-sh vec4" \
    "--fwd-cull rows --project-sh vec4 --bwd-step dot" "--fwd-cull off"; do
  timeout 40 $B/iter_bench --n 400000,1000000 $c
  timeout 30 $B/iter_bench --ply /tmp/ck/checkpoint-7000.ply --scene $S $c
done >$OUT/iter-ab.txt 2>&1
echo "ours done at $SECONDS s"
grep -h "fwd cull\|N =\|rasterize_fwd\|rasterize_bwd\|project_fwd" $OUT/iter-ab.txt | sed -e 's/^device: .*fwd cull/fwd cull/' | cut -c1-200
