#!/usr/bin/env bash
# Session 27, call L (prepared, not run): issue 12's training table again with `bwd_step: dot`
# the default: bench/train-compare.sh, ours and gsplat 1.5.3 on the real Lego, 30,000
# iterations, PSNR with the clock stopped at 7,000 and 12,500 (about 7 minutes on an H200; the
# last table, 6 Dec, had ours at 0.24-0.27 of gsplat's time).
set -uo pipefail
. .data/pre.sh; export MAX_JOBS=14 TORCH_CUDA_ARCH_LIST=9.0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
BUILD_TIMEOUT=200 timeout 580 bash bench/train-compare.sh $B /tmp/ds/nerf_synthetic_lego /tmp/g/gsplat-1.5.3 $OUT 2>&1 | tail -n 20
