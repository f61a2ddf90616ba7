#!/usr/bin/env bash
# device call 2: the rasterize forward's straight-line step (fwd_step: select). The iteration
# benchmark on 400k random Gaussians with branch and select, then splatsweep gates fwd_step
# branch -> select at 7,000 iterations with 3 pairs (float mode, per-splat backward:
# sweeps/gate-fwd-step-select.yaml), a 30,000-iteration Lego training with select (checkpoints
# 7,000 / 12,500 / 30,000, their PLYs written with the clock stopped), and the iteration
# benchmark with branch and select on both checkpoints replayed.
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
for s in branch select; do
  timeout 40 $B/iter_bench --n 400000 --fwd-step $s
done > $OUT/iter-random.txt 2>&1
grep -h "ms/iteration\|rasterize_fwd\|^device" $OUT/iter-random.txt | sed -e 's/^device: NVIDIA H200 (NVIDIA 580[^)]*), subgroup 32, float atomics yes, //'
PATH=$B:$PATH timeout 220 bash bench/lab-gates.sh $B /tmp/gates 7000 3 fwd-step-select > $OUT/gates.txt 2>&1
cat $OUT/gates.txt
cp /tmp/gates/*.out /tmp/gates/*.db $OUT/ 2>/dev/null
echo "gate done at $SECONDS s"
ck=/tmp/ck
timeout 130 $B/splat-train train --scene /tmp/ds/nerf_synthetic_lego --out $ck --set iterations=30000 \
  --set checkpoints=7000,12500,30000 --set checkpoint_ply=1 --set save_ply=0 --set fwd_step=select > $OUT/train.log 2>&1
cp $ck/result.json $OUT/train.json
tail -1 $OUT/train.log
python3 -c "import json;r=json.load(open('$OUT/train.json'));print([(c['iter'],round(c['train_s'],2),round(c['psnr_db'],3),c['splats']) for c in r['checkpoints']]);print([(k['name'],round(k['gpu_ms'])) for k in r['kernels']])"
echo "training done at $SECONDS s"
{
  for c in 7000 30000; do
    for s in branch select; do
      timeout 40 $B/iter_bench --ply $ck/checkpoint-$c.ply --scene /tmp/ds/nerf_synthetic_lego \
        --rasterize-bwd splat --fwd-step $s
    done
  done
} > $OUT/iter.txt 2>&1
grep -h "ms/iteration\|rasterize_fwd\|^device" $OUT/iter.txt | sed -e 's/^device: NVIDIA H200 (NVIDIA 580[^)]*), subgroup 32, float atomics yes, //'
echo "at $SECONDS s"
