#!/usr/bin/env bash
# Session 23, call A (session 22's planned call, which never got a device): the 30,000-iteration
# two-trainer table with the current defaults (bwd_step lean) in one call (bench/train-compare.sh:
# gsplat 1.5.3 JIT-built first, then ours, then gsplat, one at a time), our trainer writing its
# 7,000 and 30,000 checkpoints as PLY; then both trainers replay those two checkpoints through the
# Lego's training views (iter_bench, two in flight and one / bench/gsplat_iter.py) on the idle GPU.
set -uo pipefail
R=$PWD
. .data/pre.sh
export TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=14 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=/tmp/ds/nerf_synthetic_lego
OURS="--set checkpoint_ply=1 --set checkpoints=7000,12500,30000" BUILD_TIMEOUT=200 timeout 470 \
  bash bench/train-compare.sh $B $S /tmp/g/gsplat-1.5.3 $OUT/train
echo "table done at $SECONDS s"
ls /tmp/train-compare-ours/
for c in 7000 30000; do
  P=/tmp/train-compare-ours/checkpoint-$c.ply
  [ -e $P ] || continue
  { timeout 40 $B/iter_bench --ply $P --scene $S; timeout 40 $B/iter_bench --ply $P --scene $S --in-flight 1; } >$OUT/iter-ours-$c.txt 2>&1
  (cd /tmp/gsplat-1.5.3 && PYTHONPATH=/tmp/gsplat-1.5.3 TORCH_EXTENSIONS_DIR=/tmp/tx-gsplat-1.5.3 \
    timeout 60 python3 $R/bench/gsplat_iter.py --ply $P --scene $S) >$OUT/iter-gsplat-$c.txt 2>&1
  echo "replay $c done at $SECONDS s"
done
grep -h "ms/iteration\|median\|gsplat " $OUT/iter-*.txt | cut -c1-220
