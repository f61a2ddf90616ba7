#!/usr/bin/env bash
# Session 20, call A: the iteration benchmark side by side (session 19's call2b.sh, which did not
# get a device): ours with the defaults against gsplat 1.5.3 and gsplat main (90d7b4b; BUILD_3DGS=1
# NUM_CHANNELS=3), both JIT-built in the background while ours runs, on random 400k / 1M and on
# one Lego checkpoint replayed through the training views (a 7,000-iteration training writes it);
# then bwd_step select against lean on the same workloads, one after the other in this call.
set -uo pipefail
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p /tmp/g && for t in .data/gsplat-1.5.3.tar.xz .data/gsplat-main.tar.xz; do tar xJf $t -C /tmp/g; done
for n in gsplat-1.5.3 gsplat-main; do
  (cd /tmp/g/$n && TORCH_EXTENSIONS_DIR=/tmp/tx-$n MAX_JOBS=8 TORCH_CUDA_ARCH_LIST=9.0 BUILD_3DGS=1 NUM_CHANNELS=3 \
    timeout 170 python3 -c "from gsplat.cuda._backend import _C; print('built', _C)" >$OUT/build-$n.log 2>&1
   echo "exit $? at $SECONDS s" >>$OUT/build-$n.log) &
done
S=/tmp/ds/nerf_synthetic_lego
$B/splat-train train --scene $S --out /tmp/ck --set iterations=7000 --set checkpoints=7000 \
  --set checkpoint_ply=1 --set save_ply=0 >$OUT/train-ck.log 2>&1; tail -n 1 $OUT/train-ck.log
{ $B/iter_bench --n 400000,1000000; $B/iter_bench --ply /tmp/ck/checkpoint-7000.ply --scene $S; } >$OUT/iter-ours.txt 2>&1
echo "ours done at $SECONDS s"
wait
for n in gsplat-1.5.3 gsplat-main; do
  { export PYTHONPATH=/tmp/g/$n TORCH_EXTENSIONS_DIR=/tmp/tx-$n
    timeout 60 python3 bench/gsplat_iter.py --n 400000 1000000
    timeout 60 python3 bench/gsplat_iter.py --ply /tmp/ck/checkpoint-7000.ply --scene $S; } >$OUT/iter-$n.txt 2>&1
done
tail -n 1 $OUT/build-*.log
echo "gsplat done at $SECONDS s"
for st in select lean select lean; do
  { $B/iter_bench --bwd-step $st --n 400000,1000000; $B/iter_bench --bwd-step $st --ply /tmp/ck/checkpoint-7000.ply --scene $S; } >>$OUT/iter-step-$st.txt 2>&1
done
grep -h "ms/iteration\|rasterize_bwd \|gsplat \|^device" $OUT/iter-*.txt | cut -c1-200
echo "at $SECONDS s"
