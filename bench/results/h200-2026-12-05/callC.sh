#!/usr/bin/env bash
# device call C: splatsweep gates, one after the other on the quiet GPU (bench/lab-gates.sh:
# 7,000 iterations, 3 pairs, float mode, the default contamination rules): clone-share (copy at
# 2e-4 -> share at 1.6e-4, sweeps/gate-clone-share.yaml) and project-adam-fused; then the
# iteration benchmark at 400k random splats with project_adam separate and fused.
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PATH=$B:$PATH timeout 480 bash bench/lab-gates.sh $B /tmp/gates 7000 3 clone-share project-adam-fused > $OUT/gates.txt 2>&1
cat $OUT/gates.txt; cp /tmp/gates/*.out /tmp/gates/*.log /tmp/gates/*.db $OUT/ 2>/dev/null
echo "gates done at $SECONDS s"
for pa in separate fused; do timeout 40 $B/iter_bench --n 400000 --iters 150 --project-adam $pa; done > $OUT/iter.txt 2>&1
grep -h "ms/iteration\|project\|adam " $OUT/iter.txt
echo "at $SECONDS s"
