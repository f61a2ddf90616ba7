#!/usr/bin/env bash
# Session 28, call B (after call A): splatsweep's gate of the forward's group step with the next
# batch prefetched (sweeps/gate-fwd-step-group.yaml at 7,000 iterations, 3 pairs, default rules),
# then issue 12's training table (bench/train-compare.sh: ours with the settings in $OURS and
# gsplat 1.5.3, the real Lego, 30,000 iterations, PSNR with the clock stopped at 7,000 and
# 12,500).
set -uo pipefail
. .data/pre.sh; export SW_DATASETS=/tmp/ds MAX_JOBS=14 TORCH_CUDA_ARCH_LIST=9.0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PATH=$B:$PATH timeout 170 bash bench/lab-gates.sh $B $OUT/gates 7000 3 fwd-step-group 2>&1
echo "gate done at $SECONDS s"; rm -rf $OUT/gates/local-workers
BUILD_TIMEOUT=200 timeout $((585 - SECONDS)) bash bench/train-compare.sh $B /tmp/ds/nerf_synthetic_lego /tmp/g/gsplat-1.5.3 $OUT/train 2>&1 | tail -n 20
echo "done at $SECONDS s"
