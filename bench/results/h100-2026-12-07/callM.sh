#!/usr/bin/env bash
# Session 27, call M (prepared, not run): the dot step's gate at the lab's own budget, the spec as
# written (12,500 iterations) with 5 pairs, float mode, to see its quality effect beyond call G's
# 3 pairs at 7,000 (PSNR -0.023 dB there) and call K's single deterministic trajectory (-0.077).
# About 10 runs of 20 s.
set -uo pipefail
. .data/pre.sh; export SW_DATASETS=/tmp/ds
PATH=$B:$PATH timeout 560 bash bench/lab-gates.sh $B $OUT/gates 12500 5 bwd-step-dot 2>&1
echo "gate done at $SECONDS s"; rm -rf $OUT/gates/local-workers
