#!/usr/bin/env bash
# Session 19, call 3: issue 12's training table (bench/train-compare.sh): ours with the defaults
# and gsplat 1.5.3 (JIT-built untimed first) train the Lego one after the other on the quiet GPU,
# 30,000 iterations, held-out PSNR at 7,000 and 12,500 with the clock stopped and at the end.
set -uo pipefail
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p /tmp/g && tar xJf .data/gsplat-1.5.3.tar.xz -C /tmp/g
BUILD_TIMEOUT=200 timeout 580 bash bench/train-compare.sh $B /tmp/ds/nerf_synthetic_lego /tmp/g/gsplat-1.5.3 $OUT/train
tail -n 2 $OUT/train/ours.log $OUT/train/gsplat.log
echo "at $SECONDS s"
