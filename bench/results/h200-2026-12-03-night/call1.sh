#!/usr/bin/env bash
# device call 1: splatsweep gates bwd_run_pixels rows -> active at 7,000 iterations with 3 pairs
# (deterministic base, per-splat backward), then the reproducibility matrix (bench/repro.sh, both
# modes, five runs each, with today's defaults: in_flight 2, sort depth_first).
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PATH=$B:$PATH timeout 240 bash bench/lab-gates.sh $B /tmp/gates 7000 3 bwd-run-pixels > $OUT/gates.txt 2>&1
cat $OUT/gates.txt
cp /tmp/gates/*.out /tmp/gates/*.db $OUT/ 2>/dev/null
echo "gate done at $SECONDS s"
left=$((585 - SECONDS))
SW_DATASETS=/tmp/ds timeout $left bash bench/repro.sh $B/splat-train /tmp/repro > $OUT/repro.txt 2>&1
echo "repro exit $?"
cat $OUT/repro.txt
echo "at $SECONDS s"
