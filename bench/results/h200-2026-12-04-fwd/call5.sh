#!/usr/bin/env bash
# device call 5: is the float-mode outlier of call 4 (2 of 10 runs under a CPU hog grew 310k and
# 340k splats against ~292k) a state leak or the training's own dynamics? Deterministic runs are
# a function of their config, so across seeds they show the spread of the dynamics without the
# float atomics' noise: ten deterministic trainings, seeds 1..10, 7,000 iterations with the
# 30,000-iteration position-lr decay (repro.sh's settings), all under a CPU hog (one busy loop per
# core), then seed 42 twice more under the hog to set beside call 4's 293,229.
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
hog=()
for _ in $(seq "$(nproc)"); do bash -c 'while :; do :; done' & hog+=($!); done
run() {
  local d=/tmp/seed-$1-$2
  timeout 60 $B/splat-train train --scene /tmp/ds/nerf_synthetic_lego --out $d --set iterations=7000 \
    --set lr_means_steps=30000 --set deterministic=on --set seed=$1 > $d.log 2>&1
  python3 -c "
import hashlib,json,sys
r=json.load(open('$d/result.json'));m=r['metrics']
print('seed %s run %s: %d splats, %.4f dB, %.1f s, final.ply %s' % ('$1','$2',m['splats_final'],m['psnr_db'],m['train_s'],hashlib.sha256(open('$d/final.ply','rb').read()).hexdigest()[:16]))"
}
for s in 1 2 3 4 5 6 7 8 9 10; do run $s a; done | tee $OUT/seeds.txt
for k in b c; do run 42 $k; done | tee -a $OUT/seeds.txt
kill "${hog[@]}" 2>/dev/null
echo "at $SECONDS s"
