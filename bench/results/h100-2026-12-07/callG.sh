#!/usr/bin/env bash
# Session 26, call G: `fwd_cull: rows` (a band of two pixel rows steps only through the splats
# whose box reaches it) against the default, where call C's profile puts the forward at 17-27% of
# an iteration. gsplat 1.5.3 JIT-built in the background while ours trains the 30,000-iteration
# recipe with fwd_cull: rows (checkpoints at 7,000 and 30,000 as PLY; call C trained the same with
# the default, 67.5 s, 37.17 dB, 279,700 splats, also beside gsplat's build); then on the idle GPU
# the iteration benchmark, off, rows, rows with `project_sh: vec4` (the projection reads the SH
# coefficients 16 bytes at a time) and those with `bwd_step: dot` (session 27: the per-splat
# backward's pipeline carries dot(C, dL/dpix) instead of the colour) in turn twice (A B C D A B C
# D) on random 400k / 1M and both checkpoints replayed, the run stats of both replays, gsplat
# 1.5.3 on the same workloads, and splatsweep's gates of the changes (sweeps/gate-fwd-cull-rows,
# gate-bwd-step-dot, gate-project-sh-vec4 at 7,000 iterations, 3 pairs, default rules, as many as
# the call's time leaves).
set -uo pipefail
R=$PWD
. .data/pre.sh
export TORCH_CUDA_ARCH_LIST=9.0 MAX_JOBS=14 PYTHONUNBUFFERED=1 SW_DATASETS=/tmp/ds
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=/tmp/ds/nerf_synthetic_lego
G=/tmp/g/gsplat-1.5.3
(cd $G && TORCH_EXTENSIONS_DIR=/tmp/tx timeout 250 python3 -c "from gsplat.cuda._backend import _C; print('built', _C)" \
  >$OUT/build.log 2>&1; echo "exit $? at $SECONDS s" >>$OUT/build.log) &
timeout 200 $B/splat-train train --scene $S --out /tmp/ck --set iterations=30000 --set checkpoints=7000,30000 \
  --set checkpoint_ply=1 --set save_ply=0 --set fwd_cull=rows >$OUT/train-rows.log 2>&1; tail -n 1 $OUT/train-rows.log
echo "checkpoints at $SECONDS s"; ls /tmp/ck
wait; tail -n 1 $OUT/build.log
for rep in 1 2; do
  for c in "--fwd-cull off" "--fwd-cull rows" "--fwd-cull rows --project-sh vec4" \
      "--fwd-cull rows --project-sh vec4 --bwd-step dot"; do
    timeout 60 $B/iter_bench --n 400000,1000000 $c
    for k in 7000 30000; do timeout 40 $B/iter_bench --ply /tmp/ck/checkpoint-$k.ply --scene $S $c; done
  done
done >$OUT/iter-ab.txt 2>&1
echo "ours done at $SECONDS s"
# How the per-splat backward spends its steps on the replays, and what runs of 16 would save.
for k in 7000 30000; do
  timeout 40 $B/iter_bench --ply /tmp/ck/checkpoint-$k.ply --scene $S --iters 20 --warmup 5 --fwd-cull rows --run-stats
done >$OUT/run-stats.txt 2>&1; grep -h "run stats" $OUT/run-stats.txt
gs() { (cd $G && PYTHONPATH=$G TORCH_EXTENSIONS_DIR=/tmp/tx timeout 90 python3 $R/bench/gsplat_iter.py "$@"); }
{ gs --n 400000 1000000
  for k in 7000 30000; do gs --ply /tmp/ck/checkpoint-$k.ply --scene $S; done; } >$OUT/iter-gsplat.txt 2>&1
echo "gsplat done at $SECONDS s"
grep -h "fwd cull\|N =\|rasterize_fwd\|rasterize_bwd\|project_fwd\|^gsplat " $OUT/iter-ab.txt $OUT/iter-gsplat.txt | sed -e 's/^device: .*fwd cull/fwd cull/' | cut -c1-200
PATH=$B:$PATH timeout $((570 - SECONDS)) bash bench/lab-gates.sh $B $OUT/gates 7000 3 fwd-cull-rows bwd-step-dot project-sh-vec4 2>&1
echo "gate done at $SECONDS s"
