#!/usr/bin/env bash
# Session 17, call 2, with the new defaults (clone_opacity share, grad_threshold 1.6e-4, adopted
# in call 1): the iteration benchmark's new GPU-span figure on random splats; bench/repro.sh (five
# runs per mode: cold caches, plain, --progress, checkpoints, CPU hog; 7,000 iterations of the
# 30k recipe); bench/runaway.sh: ten float trainings at once on the GPU under a CPU hog on every
# core, 6,000 iterations.
set -uo pipefail
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
$B/iter_bench --n 400000,1000000 2>&1 | tee $OUT/iter-random.txt
echo "iter done at $SECONDS s"
timeout 280 bash bench/repro.sh $B/splat-train /tmp/repro > $OUT/repro.txt 2>&1; echo "repro rc $?"
cat $OUT/repro.txt | cut -c1-220
echo "repro done at $SECONDS s"
specs=(); for i in $(seq 10); do specs+=("r$i"); done
ITERS=6000 CHECKPOINTS=3000 HOG=1 timeout $((580 - SECONDS)) bash bench/runaway.sh $B/splat-train /tmp/runaway "${specs[@]}" > $OUT/runaway.txt 2>&1; echo "runaway rc $?"
cut -c1-240 $OUT/runaway.txt | tail -25
tar cJf $OUT/runaway-logs.tar.xz -C /tmp runaway --exclude='*.ply' 2>/dev/null
echo "at $SECONDS s"
