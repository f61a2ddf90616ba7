#!/usr/bin/env bash
# Session 17, call 1: sweeps/gate-clone-share.yaml as written (12,500 iterations), 5 pairs, one
# worker, default contamination rules, on a quiet GPU.
set -uo pipefail
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PATH=$B:$PATH timeout 560 bash bench/lab-gates.sh $B $OUT/gates 12500 5 clone-share
ls -la $OUT/gates
