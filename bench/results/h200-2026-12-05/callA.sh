#!/usr/bin/env bash
# device call A: (1) splatsweep gates project_adam separate -> fused (bench/lab-gates.sh: 7,000
# iterations, 3 pairs, float mode, the default contamination rules, quiet machine); (2) the
# iteration benchmark at 400k random splats with both; (3) the share grid for PSNR and splat count
# only: four 30,000-iteration trainings at once on the GPU (copy at 2e-4, share at 2e-4 / 1.6e-4
# / 1.3e-4), deterministic mode so that contention cannot change what they train (their times
# are not comparable and not used: time comes from call B's train-compare and the gate).
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PATH=$B:$PATH timeout 230 bash bench/lab-gates.sh $B /tmp/gates 7000 3 project-adam-fused > $OUT/gates.txt 2>&1
cat $OUT/gates.txt; cp /tmp/gates/*.out /tmp/gates/*.log $OUT/ 2>/dev/null
echo "gate done at $SECONDS s"
for pa in separate fused; do timeout 30 $B/iter_bench --n 400000 --iters 150 --project-adam $pa; done > $OUT/iter.txt 2>&1
grep -h "ms/iteration\|project\|adam " $OUT/iter.txt
echo "iter done at $SECONDS s"
pids=()
for p in copy:0.0002 share:0.0002 share:0.00016 share:0.00013; do
  co=${p%%:*}; th=${p#*:}; n=$co-$th
  timeout $((560 - SECONDS)) $B/splat-train train --scene /tmp/ds/nerf_synthetic_lego --out /tmp/grid/$n \
    --set iterations=30000 --set checkpoints=7000,12500 --set save_ply=0 --set deterministic=on \
    --set clone_opacity=$co --set grad_threshold=$th > $OUT/grid-$n.log 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait $p; done
echo "grid done at $SECONDS s"
for d in /tmp/grid/*; do n=$(basename $d); cp $d/result.json $OUT/grid-$n.json 2>/dev/null
  python3 -c "
import json,sys; r=json.load(open('$d/result.json')); m=r['metrics']
print('$n', ' '.join('%d: %.3f dB %d' % (c['iter'], c['psnr_db'], c['splats']) for c in r.get('checkpoints',[])), '| 30000: %.3f dB %d' % (m['psnr_db'], m['splats_final']))" 2>&1
done
