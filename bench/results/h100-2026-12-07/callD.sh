#!/usr/bin/env bash
# Session 23, call D: call C cut to what fits the device time left after seven failed starts
# (no gsplat, no 30k checkpoint): ours only, on one machine: a 7,000-iteration Lego checkpoint;
# iter_bench with two iterations in flight (the default, as the trainer) and one, alternating,
# on random 400k / 1M and the checkpoint replayed; then the sort's block size
# (bench/sort-items.sh: the default bundle, GS_SORT_ITEMS 2 and 4, A B C A).
set -uo pipefail
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=/tmp/ds/nerf_synthetic_lego
timeout 90 $B/splat-train train --scene $S --out /tmp/ck --set iterations=7000 --set checkpoints=7000 \
  --set checkpoint_ply=1 --set save_ply=0 >$OUT/train-ck.log 2>&1; tail -n 1 $OUT/train-ck.log
echo "checkpoint at $SECONDS s"
for f in 2 1 2 1; do
  { timeout 40 $B/iter_bench --n 400000,1000000 --in-flight $f; timeout 30 $B/iter_bench --ply /tmp/ck/checkpoint-7000.ply --scene $S --in-flight $f; } >>$OUT/in-flight.txt 2>&1
done
grep "N =" $OUT/in-flight.txt | cut -c1-200
echo "in-flight done at $SECONDS s"
mkdir -p /tmp/items && tar xJf .data/items.tar.xz -C /tmp/items
timeout $((285 - SECONDS)) bash bench/sort-items.sh $OUT/items $B /tmp/items/items2/bin /tmp/items/items4/bin -- /tmp/ck/checkpoint-7000.ply $S
echo "sort-items done at $SECONDS s"
