#!/usr/bin/env bash
# Session 24, call F: the iteration table of call A2 in the order of its value, for a call that
# may be cut short by the device time left (what it wrote under $OUT comes back either way):
# gsplat 1.5.3 JIT-built in the background while ours trains the 7,000-iteration recipe with its
# checkpoint written as PLY and runs iter_bench (two in flight, the trainer's default, and one) on
# random 400k / 1M and the checkpoint replayed; then gsplat 1.5.3 on the same workloads; then the
# sort's block sizes (bench/sort-items.sh, A B C A). No 30k checkpoint (its training is 150 s).
set -uo pipefail
R=$PWD
. .data/pre.sh
export TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=14 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=/tmp/ds/nerf_synthetic_lego
G=/tmp/g/gsplat-1.5.3
P=/tmp/ck/checkpoint-7000.ply
(cd $G && TORCH_EXTENSIONS_DIR=/tmp/tx timeout 250 python3 -c "from gsplat.cuda._backend import _C; print('built', _C)" \
  >$OUT/build.log 2>&1; echo "exit $? at $SECONDS s" >>$OUT/build.log) &
timeout 90 $B/splat-train train --scene $S --out /tmp/ck --set iterations=7000 --set checkpoints=7000 \
  --set checkpoint_ply=1 --set save_ply=0 >$OUT/train-ck.log 2>&1; tail -n 1 $OUT/train-ck.log
echo "checkpoint at $SECONDS s"
# Ours while gsplat builds on the CPU: the GPU work does not share the GPU with it, but the host
# side of ours shares the CPU; the run is repeated after the build (below) for that reason.
for f in 2 1; do
  timeout 40 $B/iter_bench --n 400000,1000000 --in-flight $f
  timeout 30 $B/iter_bench --ply $P --scene $S --in-flight $f
done >$OUT/iter-ours-during-build.txt 2>&1
echo "ours (during the build) at $SECONDS s"
wait; tail -n 1 $OUT/build.log
gs() { (cd $G && PYTHONPATH=$G TORCH_EXTENSIONS_DIR=/tmp/tx timeout 90 python3 $R/bench/gsplat_iter.py "$@"); }
for f in 2 1; do
  timeout 40 $B/iter_bench --n 400000,1000000 --in-flight $f
  timeout 30 $B/iter_bench --ply $P --scene $S --in-flight $f
done >$OUT/iter-ours.txt 2>&1
echo "ours at $SECONDS s"
gs --n 400000 1000000 >$OUT/iter-gsplat-random.txt 2>&1
echo "gsplat random at $SECONDS s"
gs --ply $P --scene $S >$OUT/iter-gsplat-7000.txt 2>&1
echo "gsplat replay at $SECONDS s"
grep -h "N =\|^gsplat " $OUT/iter-ours.txt $OUT/iter-gsplat-*.txt | cut -c1-230
mkdir -p /tmp/items && tar xJf .data/items.tar.xz -C /tmp/items
timeout $((560 - SECONDS)) bash bench/sort-items.sh $OUT/items $B /tmp/items/items2/bin /tmp/items/items4/bin -- $P $S
echo "sort-items done at $SECONDS s"
