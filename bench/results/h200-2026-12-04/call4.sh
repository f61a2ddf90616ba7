#!/usr/bin/env bash
# device call 4: splatsweep gates bwd_drain full -> trim at 7,000 iterations with 3 pairs (float
# mode, per-splat backward: sweeps/gate-bwd-drain-trim.yaml); a 30,000-iteration Lego training
# with today's defaults plus bwd_drain: trim (checkpoints 7,000 / 12,500, their PLYs written with
# the clock stopped), to set beside call 3's 73.7 s; then the iteration benchmark with full and
# trim on both checkpoints replayed, and --run-stats on them.
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PATH=$B:$PATH timeout 200 bash bench/lab-gates.sh $B /tmp/gates 7000 3 bwd-drain-trim > $OUT/gates.txt 2>&1
cat $OUT/gates.txt
cp /tmp/gates/*.out /tmp/gates/*.db $OUT/ 2>/dev/null
echo "gate done at $SECONDS s"
ck=/tmp/ck
timeout 130 $B/splat-train train --scene /tmp/ds/nerf_synthetic_lego --out $ck --set iterations=30000 \
  --set checkpoints=7000,12500,30000 --set checkpoint_ply=1 --set save_ply=0 --set bwd_drain=trim > $OUT/train-trim.log 2>&1
cp $ck/result.json $OUT/train-trim.json
tail -1 $OUT/train-trim.log
python3 -c "import json;r=json.load(open('$OUT/train-trim.json'));print([(c['iter'],round(c['train_s'],2),round(c['psnr_db'],3),c['splats']) for c in r['checkpoints']])"
echo "training done at $SECONDS s"
{
  for c in 7000 30000; do
    for d in full trim; do
      timeout 40 $B/iter_bench --ply $ck/checkpoint-$c.ply --scene /tmp/ds/nerf_synthetic_lego \
        --rasterize-bwd splat --bwd-drain $d
    done
    timeout 40 $B/iter_bench --ply $ck/checkpoint-$c.ply --scene /tmp/ds/nerf_synthetic_lego \
      --rasterize-bwd splat --run-stats --iters 20
  done
} > $OUT/iter.txt 2>&1
grep -h "ms/iteration\|run stats\|^device" $OUT/iter.txt | sed -e 's/^device: NVIDIA H200 (NVIDIA 580[^)]*), subgroup 32, float atomics yes, //'
echo "at $SECONDS s"
