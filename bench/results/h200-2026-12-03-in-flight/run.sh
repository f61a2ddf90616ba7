#!/usr/bin/env bash
# device call 1: splatsweep gates in_flight 1 -> 2 and sort pairs -> depth_first at 7,000
# iterations with 3 pairs each (deterministic bases: equal PSNR exactly), with the default
# contamination rules, one gate after the other (bench/lab-gates.sh).
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PATH=$B:$PATH timeout 560 bash bench/lab-gates.sh $B /tmp/gates 7000 3 in-flight sort-depth-first > $OUT/gates.txt 2>&1
cat $OUT/gates.txt
cp /tmp/gates/*.out /tmp/gates/*.db $OUT/ 2>/dev/null
echo "gates done at $SECONDS s"
