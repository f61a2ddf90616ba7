#!/usr/bin/env bash
# Session 27, call J (after call G, on the same warm H100, 207 s): ours trains the
# 30,000-iteration recipe with `bwd_step: dot` (the result call G's gate adopted), then
# splatsweep's gate of `project_sh: vec4` (sweeps/gate-project-sh-vec4.yaml, 7,000 iterations,
# 3 pairs, default rules), which call G's time did not reach.
. .data/pre.sh; export SW_DATASETS=/tmp/ds; S=/tmp/ds/nerf_synthetic_lego
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 120 $B/splat-train train --scene $S --out /tmp/r --set iterations=30000 --set bwd_step=dot >$OUT/train-dot.log 2>&1
tail -n 2 $OUT/train-dot.log; echo "train done at $SECONDS s"
PATH=$B:$PATH timeout $((400 - SECONDS)) bash bench/lab-gates.sh $B $OUT/gates 7000 3 project-sh-vec4 2>&1
echo "gate done at $SECONDS s"; rm -rf $OUT/gates/local-workers
