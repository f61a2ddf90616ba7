#!/usr/bin/env bash
# device call 1: splatsweep gates bwd_run_pixels active -> covered at 7,000 iterations with 3
# pairs (float mode, per-splat backward: sweeps/gate-bwd-run-covered.yaml); then one 30,000-
# iteration Lego training with checkpoint PLYs at 7,000 and 30,000 and, on both checkpoints
# replayed, the iteration benchmark's per-splat backward with active and covered run pixels and
# its --run-stats (how the 32-lane pipeline spends its steps on the real scene).
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PATH=$B:$PATH timeout 240 bash bench/lab-gates.sh $B /tmp/gates 7000 3 bwd-run-covered > $OUT/gates.txt 2>&1
cat $OUT/gates.txt
cp /tmp/gates/*.out /tmp/gates/*.db $OUT/ 2>/dev/null
echo "gate done at $SECONDS s"
ck=/tmp/ck
timeout 200 $B/splat-train train --scene /tmp/ds/nerf_synthetic_lego --out $ck --set iterations=30000 \
  --set checkpoints=7000,30000 --set checkpoint_ply=1 --set save_ply=0 > $OUT/train-ck.log 2>&1
cp $ck/result.json $OUT/train-ck.json
tail -3 $OUT/train-ck.log
echo "training done at $SECONDS s"
for c in 7000 30000; do
  for rp in active covered; do
    timeout 60 $B/iter_bench --ply $ck/checkpoint-$c.ply --scene /tmp/ds/nerf_synthetic_lego --rasterize-bwd splat --run-pixels $rp
  done
  timeout 60 $B/iter_bench --ply $ck/checkpoint-$c.ply --scene /tmp/ds/nerf_synthetic_lego --rasterize-bwd splat --run-stats
done > $OUT/iter.txt 2>&1
grep -h "ms/iteration\|workload\|run-stats\|run_stats\|pixels\|fill\|lanes" $OUT/iter.txt | head -60
echo "at $SECONDS s"
