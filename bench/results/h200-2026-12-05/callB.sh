#!/usr/bin/env bash
# device call B: issue 12's training table with the chosen configuration (choice.env: OURS, the
# --set arguments), ours and gsplat 1.5.3 in one call (bench/train-compare.sh: gsplat JIT-built
# untimed first, then one training at a time on the quiet GPU); then bench/runaway.sh: ten float-
# mode trainings of that configuration at once on the GPU under a CPU hog on every core.
. .data/pre.sh
. bench/results/h200-2026-12-05/choice.env
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
echo "OURS=$OURS"
echo "runaway: $RUNAWAY at ${RUNAWAY_ITERS} iterations"
mkdir -p /tmp/g && tar xJf .data/gsplat153.tar.xz -C /tmp/g
OURS="$OURS" BUILD_TIMEOUT=150 timeout 450 bash bench/train-compare.sh $B /tmp/ds/nerf_synthetic_lego /tmp/g/gsplat153 $OUT/train
tail -2 $OUT/train/ours.log; tail -2 $OUT/train/gsplat.log
echo "compare done at $SECONDS s"
specs=(); for i in $(seq 10); do specs+=("r$i:$RUNAWAY"); done
ITERS=${RUNAWAY_ITERS:-5000} CHECKPOINTS=3000 HOG=1 timeout $((585 - SECONDS)) bash bench/runaway.sh $B/splat-train $OUT/runaway "${specs[@]}" > $OUT/runaway.txt 2>&1
cat $OUT/runaway.txt | cut -c1-240
echo "at $SECONDS s"
