#!/usr/bin/env bash
# Session 20, call B: call A's gsplat runs failed (BUILD_3DGS / NUM_CHANNELS / TORCH_CUDA_ARCH_LIST
# were set for the builds alone, so the benchmark's import saw other build flags, rebuilt and hit
# its timeout). Here they are exported for the whole call. Then, with the builds done and the
# machine otherwise idle: ours (defaults, and bwd_step lean), gsplat 1.5.3 and gsplat main on
# random 400k / 1M and a 7,000-iteration Lego checkpoint replayed; then splatsweep's gate of
# bwd_step lean, 7,000 iterations, 3 pairs, default rules: deterministic base, and the float-mode
# form if the time is left.
set -uo pipefail
. .data/pre.sh
export TORCH_CUDA_ARCH_LIST=9.0 BUILD_3DGS=1 NUM_CHANNELS=3 MAX_JOBS=8
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p /tmp/g && for t in .data/gsplat-1.5.3.tar.xz .data/gsplat-main.tar.xz; do tar xJf $t -C /tmp/g; done
for n in gsplat-1.5.3 gsplat-main; do
  (cd /tmp/g/$n && TORCH_EXTENSIONS_DIR=/tmp/tx-$n timeout 200 python3 -c "from gsplat.cuda._backend import _C; print('built', _C)" >$OUT/build-$n.log 2>&1
   echo "exit $? at $SECONDS s" >>$OUT/build-$n.log) &
done
S=/tmp/ds/nerf_synthetic_lego
$B/splat-train train --scene $S --out /tmp/ck --set iterations=7000 --set checkpoints=7000 \
  --set checkpoint_ply=1 --set save_ply=0 >$OUT/train-ck.log 2>&1; tail -n 1 $OUT/train-ck.log
wait
tail -qn 1 $OUT/build-*.log
for st in select lean; do
  { $B/iter_bench --bwd-step $st --n 400000,1000000; $B/iter_bench --bwd-step $st --ply /tmp/ck/checkpoint-7000.ply --scene $S; } >$OUT/iter-ours-$st.txt 2>&1
done
for n in gsplat-1.5.3 gsplat-main; do
  { export PYTHONPATH=/tmp/g/$n TORCH_EXTENSIONS_DIR=/tmp/tx-$n
    timeout 60 python3 bench/gsplat_iter.py --n 400000 1000000
    timeout 60 python3 bench/gsplat_iter.py --ply /tmp/ck/checkpoint-7000.ply --scene $S; } >$OUT/iter-$n.txt 2>&1
done
grep -h "ms/iteration\|rasterize_bwd \|gsplat \|^device" $OUT/iter-*.txt | cut -c1-240
echo "benchmarks done at $SECONDS s"
PATH=$B:$PATH timeout $((585 - SECONDS)) bash bench/lab-gates.sh $B $OUT/gates 7000 3 bwd-step-lean-det 2>&1
echo "det gate done at $SECONDS s"
[ $SECONDS -lt 420 ] && PATH=$B:$PATH timeout $((590 - SECONDS)) bash bench/lab-gates.sh $B $OUT/gates 7000 3 bwd-step-lean 2>&1
echo "at $SECONDS s"
