#!/usr/bin/env bash
# Session 28, call A: the rasterize forward walks a dense tile's splats one after another, so
# its time follows the longest walk, not the work (4 Dec: two pixels per invocation, half the
# walks in parallel, was slower). Two bit-exact changes shorten that walk: `fwd_step: group`
# (group8: 8) computes the alphas of the next four splats before compositing them in order, and
# `fwd_stage: prefetch` loads the next batch's splats into registers before walking this one; and
# `fwd_order: dense_first` starts the tiles with the most pairs first.
# gsplat 1.5.3 JIT-builds in the background while ours trains the 30,000-iteration recipe with
# both (checkpoints at 7,000 and 30,000 as PLY); then on the idle GPU the iteration benchmark in
# turn twice over the configurations on random 400k / 1M and both checkpoints replayed, the tile
# and run stats of both replays, and gsplat 1.5.3 on the same workloads.
set -uo pipefail
R=$PWD
. .data/pre.sh
export TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=14 PYTHONUNBUFFERED=1 SW_DATASETS=/tmp/ds
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=/tmp/ds/nerf_synthetic_lego
G=/tmp/g/gsplat-1.5.3
(cd $G && TORCH_EXTENSIONS_DIR=/tmp/tx timeout 250 python3 -c "from gsplat.cuda._backend import _C; print('built', _C)" \
  >$OUT/build.log 2>&1; echo "exit $? at $SECONDS s" >>$OUT/build.log) &
timeout 200 $B/splat-train train --scene $S --out /tmp/ck --set iterations=30000 --set checkpoints=7000,30000 \
  --set checkpoint_ply=1 --set save_ply=0 --set fwd_step=group --set fwd_stage=prefetch --set fwd_order=dense_first >$OUT/train-group.log 2>&1
tail -n 1 $OUT/train-group.log
echo "checkpoints at $SECONDS s"; ls /tmp/ck
wait; tail -n 1 $OUT/build.log
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
gs() { (cd $G && PYTHONPATH=$G TORCH_EXTENSIONS_DIR=/tmp/tx timeout 90 python3 $R/bench/gsplat_iter.py "$@"); }
{ gs --n 400000 1000000
  for k in 7000 30000; do gs --ply /tmp/ck/checkpoint-$k.ply --scene $S; done; } >$OUT/iter-gsplat.txt 2>&1
echo "gsplat done at $SECONDS s"
grep -h "fwd step\|N =\|rasterize_fwd" $OUT/iter-ab.txt | sed -e 's/^device: .*fwd step/fwd step/' | cut -c1-150
cat $OUT/iter-gsplat.txt | grep "^gsplat"
