#!/usr/bin/env bash
# device call 4: reproducibility with today's defaults (bench/repro.sh, 7,000 iterations with the
# 30,000-iteration position-lr decay, as in the runaway): the five-run matrix in both modes (cold
# caches, plain, --progress, checkpoints, CPU hog), then ten float-mode runs each under a CPU hog
# (one busy loop per core, 16 here) to look for the runaway.
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timeout 260 bash bench/repro.sh $B/splat-train /tmp/repro > $OUT/repro.txt 2>&1
cat $OUT/repro.txt | tail -14
echo "matrix done at $SECONDS s"
MODES=off VARIANTS="$(echo cpu_hog{1..10})" timeout 250 bash bench/repro.sh $B/splat-train /tmp/repro-hog > $OUT/repro-hog.txt 2>&1
tail -13 $OUT/repro-hog.txt
echo "at $SECONDS s"
