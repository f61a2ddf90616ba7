#!/usr/bin/env bash
# Session 23, call B: the sort's block size (bench/sort-items.sh): the default bundle (GS_SORT_ITEMS
# 8) against builds with 2 and 4 keys per invocation (cmake -DSW_SORT_ITEMS=K; same order bit for
# bit, checked by each bundle's test_gpu_sort on this GPU first), timed in turn A B C A: the sort
# alone at the Lego replay's / random 400k's / 1M's pair counts, the iteration benchmark on random
# 400k / 1M and on a 7,000-iteration Lego checkpoint replayed. Then iter_bench with two
# iterations in flight (the default now, as the trainer) against one, on the same workloads.
set -uo pipefail
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p /tmp/items && tar xJf .data/items.tar.xz -C /tmp/items
S=/tmp/ds/nerf_synthetic_lego
timeout 90 $B/splat-train train --scene $S --out /tmp/ck --set iterations=7000 --set checkpoints=7000 \
  --set checkpoint_ply=1 --set save_ply=0 >$OUT/train-ck.log 2>&1; tail -n 1 $OUT/train-ck.log
echo "checkpoint at $SECONDS s"
timeout 300 bash bench/sort-items.sh $OUT $B /tmp/items/items2/bin /tmp/items/items4/bin -- /tmp/ck/checkpoint-7000.ply $S
echo "sort-items done at $SECONDS s"
for f in 2 1 2 1; do
  { timeout 60 $B/iter_bench --n 400000,1000000 --in-flight $f; timeout 40 $B/iter_bench --ply /tmp/ck/checkpoint-7000.ply --scene $S --in-flight $f; } 2>&1 | grep "N =" >>$OUT/in-flight.txt
done
cat $OUT/in-flight.txt
echo "at $SECONDS s"
