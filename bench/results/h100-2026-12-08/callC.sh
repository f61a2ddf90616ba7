#!/usr/bin/env bash
# Session 28, call C: splatsweep's gate of `fwd_order: dense_first` on a base with the forward's
# group step and prefetch (sweeps/gate-fwd-order-dense-first.yaml at 7,000 iterations, 3 pairs,
# default rules).
. .data/pre.sh; export SW_DATASETS=/tmp/ds
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PATH=$B:$PATH timeout 200 bash bench/lab-gates.sh $B $OUT/gates 7000 3 fwd-order-dense-first 2>&1
echo "gate done at $SECONDS s"; rm -rf $OUT/gates/local-workers
