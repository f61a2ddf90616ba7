#!/usr/bin/env bash
# The iteration benchmark on random and on replayed workloads, ours (both rasterize backwards)
# and gsplat (each checkout named), in one call on one GPU machine:
#   1. gsplat's CUDA extensions are JIT-built in the background (one per checkout, at most
#      BUILD_TIMEOUT seconds, default 480; for gsplat main set BUILD_3DGS=1 NUM_CHANNELS=3 in the
#      environment: it then builds only the 3DGS kernels for RGB, 122 s on an H200);
#   2. one 30,000-iteration training of the real scene with checkpoint PLYs at 7,000 and 30,000
#      (splat-train --set checkpoint_ply=1; RASTER_BWD picks its backward, default splat); its
#      timing overlaps the builds, so it only makes the workloads (the timed trainings are
#      bench/train-compare.sh's);
#   3. after the builds: iter_bench (random N = 400k, 1M, and both checkpoints replayed through
#      the training views) with the per-pixel and the per-splat backward, then gsplat_iter.py
#      on the same workloads for each checkout.
#   bench/replay-compare.sh BIN_DIR SCENE OUT [GSPLAT_CHECKOUT...]
# MODES="pixel splat" (default) names our backwards to time.
# BIN_DIR holds splat-train and iter_bench (bench/gpu-bundle.sh). Writes OUT/*.txt, OUT/*.json.
set -uo pipefail
bin=${1:?bin dir}
scene=${2:?scene}
out=${3:?out dir}
shift 3
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
ck=/tmp/replay-ck
for g in "$@"; do
  name=$(basename "$g")
  rm -rf "/tmp/$name" && cp -r "$g" "/tmp/$name"
  (cd "/tmp/$name" && TORCH_EXTENSIONS_DIR="/tmp/tx-$name" MAX_JOBS=${MAX_JOBS:-7} \
    TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} \
    timeout "${BUILD_TIMEOUT:-480}" python3 -c "from gsplat.cuda._backend import _C; print('built', _C)" \
    >"$out/build-$name.log" 2>&1; echo "exit $? after ${SECONDS} s" >>"$out/build-$name.log") &
done
rm -rf "$ck"
"$bin/splat-train" train --scene "$scene" --out "$ck" --set iterations=30000 \
  --set checkpoints=7000,30000 --set checkpoint_ply=1 --set save_ply=0 \
  --set rasterize_bwd="${RASTER_BWD:-splat}" >"$out/train-ck.log" 2>&1
cp "$ck/result.json" "$out/train-ck.json" 2>/dev/null
wait
for m in ${MODES:-pixel splat}; do
  "$bin/iter_bench" --n 400000,1000000 --rasterize-bwd $m
  for c in 7000 30000; do
    "$bin/iter_bench" --ply "$ck/checkpoint-$c.ply" --scene "$scene" --rasterize-bwd $m
  done
done >"$out/iter-ours.txt" 2>&1
for g in "$@"; do
  name=$(basename "$g")
  {
    export PYTHONPATH="/tmp/$name" TORCH_EXTENSIONS_DIR="/tmp/tx-$name"
    python3 "$here/gsplat_iter.py" --n 400000 1000000
    for c in 7000 30000; do
      python3 "$here/gsplat_iter.py" --ply "$ck/checkpoint-$c.ply" --scene "$scene"
    done
  } >"$out/iter-$name.txt" 2>&1
done
grep -h "ms/iteration\|workload\|rasterize_bwd \|gsplat " "$out"/iter-*.txt
