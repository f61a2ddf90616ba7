#!/usr/bin/env bash
# device call 2: tile_cull box vs ellipse on the H200: a 7k Lego training makes the replay
# workload, iter_bench both backwards x both culls (replay and random), then splatsweep gates
# tile_cull at 7,000 iterations with 3 pairs (deterministic base: equal PSNR exactly).
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=/tmp/ds/nerf_synthetic_lego
T0=$SECONDS
$B/splat-train train --scene $S --out /tmp/ck7 --set iterations=7000 --set checkpoints=7000 \
  --set checkpoint_ply=1 --set save_ply=0 --set rasterize_bwd=splat --set tile_cull=ellipse > $OUT/train-ck7.log 2>&1
cp /tmp/ck7/result.json $OUT/train-ck7-ellipse.json
echo "7k training: $((SECONDS - T0)) s"
{
for bwd in "" --splat-bwd; do
  for cull in "" --tile-cull-ellipse; do
    $B/iter_bench --ply /tmp/ck7/checkpoint-7000.ply --scene $S $bwd $cull
  done
done
for cull in "" --tile-cull-ellipse; do $B/iter_bench --n 400000,1000000 --splat-bwd $cull; done
} > $OUT/iter.txt 2>&1
grep -E "^device|^N =|rasterize|radix|emit" $OUT/iter.txt
echo "iter_bench done: $((SECONDS - T0)) s"
PATH=$B:$PATH timeout $((590 - SECONDS)) bash bench/lab-gates.sh $B /tmp/gates 7000 3 tile-cull tile-cull-splat > $OUT/gates.txt 2>&1
cat $OUT/gates.txt
cp /tmp/gates/*.out /tmp/gates/*.db $OUT/ 2>/dev/null
echo "all: $((SECONDS - T0)) s"
ls -la $OUT
