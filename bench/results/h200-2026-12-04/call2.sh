#!/usr/bin/env bash
# device call 2: splatsweep gates bwd_step branch -> select at 7,000 iterations with 3 pairs
# (float mode, per-splat backward: sweeps/gate-bwd-step-select.yaml); then the iteration
# benchmark with both steps and both run-pixel walks on the Lego checkpoints (7,000, 30,000)
# replayed, and on random 400k / 1M Gaussians.
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PATH=$B:$PATH timeout 230 bash bench/lab-gates.sh $B /tmp/gates 7000 3 bwd-step-select > $OUT/gates.txt 2>&1
cat $OUT/gates.txt
cp /tmp/gates/*.out /tmp/gates/*.db $OUT/ 2>/dev/null
echo "gate done at $SECONDS s"
ck=/tmp/ck
timeout 150 $B/splat-train train --scene /tmp/ds/nerf_synthetic_lego --out $ck --set iterations=30000 \
  --set checkpoints=7000,30000 --set checkpoint_ply=1 --set save_ply=0 > $OUT/train-ck.log 2>&1
tail -1 $OUT/train-ck.log
echo "training done at $SECONDS s"
{
  for c in 7000 30000; do
    for rp in active covered; do
      for st in branch select; do
        timeout 40 $B/iter_bench --ply $ck/checkpoint-$c.ply --scene /tmp/ds/nerf_synthetic_lego \
          --rasterize-bwd splat --run-pixels $rp --bwd-step $st
      done
    done
  done
  for st in branch select; do
    timeout 60 $B/iter_bench --n 400000,1000000 --rasterize-bwd splat --bwd-step $st
  done
} > $OUT/iter.txt 2>&1
grep -h "ms/iteration\|workload\|^device" $OUT/iter.txt | sed -e 's/^device: NVIDIA H200 (NVIDIA 580[^)]*), subgroup 32, float atomics yes, //'
echo "at $SECONDS s"
