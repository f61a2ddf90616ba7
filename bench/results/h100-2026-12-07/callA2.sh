#!/usr/bin/env bash
# Session 23, call A2 (what remains of issue 12's iteration benchmark, before the 30k table):
# gsplat 1.5.3 JIT-built in the background while ours trains the 30,000-iteration recipe once,
# writing its 7,000 and 30,000 checkpoints as PLY (its time is not used: the build shares the
# CPU); then, on the idle GPU, one benchmark at a time: ours (two iterations in flight, the
# default as in the trainer, and one) and gsplat 1.5.3 on random 400k / 1M and on both checkpoints
# replayed through the Lego's training views.
set -uo pipefail
R=$PWD
. .data/pre.sh
export TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=14 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=/tmp/ds/nerf_synthetic_lego
G=/tmp/g/gsplat-1.5.3
(cd $G && TORCH_EXTENSIONS_DIR=/tmp/tx timeout 250 python3 -c "from gsplat.cuda._backend import _C; print('built', _C)" \
  >$OUT/build.log 2>&1; echo "exit $? at $SECONDS s" >>$OUT/build.log) &
timeout 200 $B/splat-train train --scene $S --out /tmp/ck --set iterations=30000 --set checkpoints=7000,30000 \
  --set checkpoint_ply=1 --set save_ply=0 >$OUT/train-ck.log 2>&1; tail -n 2 $OUT/train-ck.log
echo "checkpoints at $SECONDS s"; ls /tmp/ck
wait; tail -n 1 $OUT/build.log
gs() { (cd $G && PYTHONPATH=$G TORCH_EXTENSIONS_DIR=/tmp/tx timeout 90 python3 $R/bench/gsplat_iter.py "$@"); }
for f in 2 1; do timeout 60 $B/iter_bench --n 400000,1000000 --in-flight $f; done >$OUT/iter-ours-random.txt 2>&1
gs --n 400000 1000000 >$OUT/iter-gsplat-random.txt 2>&1
echo "random done at $SECONDS s"
for c in 7000 30000; do
  P=/tmp/ck/checkpoint-$c.ply
  [ -e $P ] || continue
  for f in 2 1; do timeout 40 $B/iter_bench --ply $P --scene $S --in-flight $f; done >$OUT/iter-ours-$c.txt 2>&1
  gs --ply $P --scene $S >$OUT/iter-gsplat-$c.txt 2>&1
  echo "replay $c done at $SECONDS s"
done
grep -h "N =\|^gsplat " $OUT/iter-*.txt | cut -c1-230
