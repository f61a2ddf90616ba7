#!/usr/bin/env bash
# Session 27, call K (after call J, on the same warm H100, 139 s): splatsweep's gate of
# `bwd_step: dot` on a deterministic base (sweeps/gate-bwd-step-dot-det.yaml, which the call
# wrote with sed from gate-bwd-step-dot.yaml; committed since), 7,000 iterations, 3 pairs.
. .data/pre.sh; export SW_DATASETS=/tmp/ds
PATH=$B:$PATH timeout 230 bash bench/lab-gates.sh $B $OUT/gates 7000 3 bwd-step-dot-det 2>&1
echo "gate done at $SECONDS s"; rm -rf $OUT/gates/local-workers
