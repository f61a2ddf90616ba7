#!/usr/bin/env bash
# Session 28, call D (prepared, not run: the session's device time was spent): issue 12's
# training table with the defaults of 1438400 (the forward's group step, prefetch and densest
# tiles first), ours and gsplat 1.5.3 on the real Lego to 30,000 iterations, PSNR with the clock
# stopped at 7,000 and 12,500. Call B ran the same under a 430 s limit, which cut gsplat at 27,500
# iterations; gsplat needs about 250 s for 30,000 on an H100, its build about 100 s, ours about
# 60 s, so this call gives it 590 s.
set -uo pipefail
. .data/pre.sh; export MAX_JOBS=14 TORCH_CUDA_ARCH_LIST=9.0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
BUILD_TIMEOUT=200 timeout 590 bash bench/train-compare.sh $B /tmp/ds/nerf_synthetic_lego /tmp/g/gsplat-1.5.3 $OUT 2>&1 | tail -n 20
