#!/usr/bin/env bash
# device call 3: issue 12's training table with today's defaults (bwd_step: select), ours and
# gsplat 1.5.3 in one call (bench/train-compare.sh: gsplat JIT-built untimed first, then one
# training at a time).
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p /tmp/g && tar xJf .data/gsplat153.tar.xz -C /tmp/g
BUILD_TIMEOUT=200 bash bench/train-compare.sh $B /tmp/ds/nerf_synthetic_lego /tmp/g/gsplat153 $OUT/train
tail -3 $OUT/train/ours.log; tail -3 $OUT/train/gsplat.log
echo "at $SECONDS s"
