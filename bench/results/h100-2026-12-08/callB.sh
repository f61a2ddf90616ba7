#!/usr/bin/env bash
# Session 28, call B (after call A): issue 12's training table (bench/train-compare.sh: ours with
# the defaults plus $OURS, and gsplat 1.5.3, the real Lego, 30,000 iterations, PSNR with the clock
# stopped at 7,000 and 12,500; ours keeps its 7,000 checkpoint and final splats as PLY), then on
# the idle GPU the iteration benchmark, ours with the defaults and with $OURS_ITER, and gsplat
# 1.5.3 (built by train-compare), on random 400k / 1M and ours' 7,000 and 30,000 splat sets
# replayed.
set -uo pipefail
R=$PWD
. .data/pre.sh; export SW_DATASETS=/tmp/ds MAX_JOBS=14 TORCH_CUDA_ARCH_LIST=9.0 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=/tmp/ds/nerf_synthetic_lego
OURS="--set checkpoint_ply=1 --set save_ply=1 ${OURS:-}" BUILD_TIMEOUT=200 timeout 430 \
  bash bench/train-compare.sh $B $S /tmp/g/gsplat-1.5.3 $OUT/train 2>&1 | tail -n 12
echo "train-compare done at $SECONDS s"
mkdir -p /tmp/ck && cp /tmp/train-compare-ours/checkpoint-7000.ply /tmp/ck/ && cp /tmp/train-compare-ours/final.ply /tmp/ck/checkpoint-30000.ply
for c in "" "${OURS_ITER:-}"; do
  timeout 60 $B/iter_bench --n 400000,1000000 $c
  for k in 7000 30000; do timeout 40 $B/iter_bench --ply /tmp/ck/checkpoint-$k.ply --scene $S $c; done
done >$OUT/iter-ours.txt 2>&1
G=/tmp/gsplat-1.5.3
gs() { (cd $G && PYTHONPATH=$G TORCH_EXTENSIONS_DIR=/tmp/tx-gsplat-1.5.3 timeout 90 python3 $R/bench/gsplat_iter.py "$@"); }
{ gs --n 400000 1000000
  for k in 7000 30000; do gs --ply /tmp/ck/checkpoint-$k.ply --scene $S; done; } >$OUT/iter-gsplat.txt 2>&1
grep -h "fwd step\|N =\|rasterize_fwd\|rasterize_bwd" $OUT/iter-ours.txt | sed -e 's/^device: .*fwd step/fwd step/' | cut -c1-150
grep -h "^gsplat" $OUT/iter-gsplat.txt
echo "done at $SECONDS s"
