#!/usr/bin/env bash
# Session 20, call C: issue 12's training table with bwd_step lean (the default from this session
# on; the bundle of this call predates the change, so OURS names it), ours and gsplat 1.5.3 one
# after the other on the quiet GPU (bench/train-compare.sh), 12,500 iterations with held-out PSNR
# at 7,000 (clock stopped) and at the end: the 30,000-iteration form did not fit the device time
# left.
set -uo pipefail
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p /tmp/g && tar xJf .data/gsplat-1.5.3.tar.xz -C /tmp/g
OURS="--set bwd_step=lean" ITERS=12500 CHECKPOINTS=7000 BUILD_TIMEOUT=200 timeout 480 \
  bash bench/train-compare.sh $B /tmp/ds/nerf_synthetic_lego /tmp/g/gsplat-1.5.3 $OUT/train
cat $OUT/train/table.txt
echo "at $SECONDS s"
