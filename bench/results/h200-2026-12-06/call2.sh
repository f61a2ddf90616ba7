#!/usr/bin/env bash
# Session 19, call 2: the iteration benchmark side by side (bench/replay-compare.sh): gsplat 1.5.3
# and gsplat main (90d7b4b; BUILD_3DGS=1 NUM_CHANNELS=3: its 3DGS kernels for RGB) JIT-built in
# the background while one 30,000-iteration Lego training with the defaults writes the 7,000 and
# 30,000 checkpoints; then ours (the defaults: per-splat backward) and both gsplats on random
# 400k / 1M Gaussians and on both checkpoints replayed through the training views.
set -uo pipefail
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p /tmp/g && for t in .data/gsplat-1.5.3.tar.xz .data/gsplat-main.tar.xz; do tar xJf $t -C /tmp/g; done
python3 -c "import torch; print('torch', torch.__version__, torch.version.cuda)"
BUILD_3DGS=1 NUM_CHANNELS=3 MODES=splat MAX_JOBS=8 BUILD_TIMEOUT=240 timeout 420 \
  bash bench/replay-compare.sh $B /tmp/ds/nerf_synthetic_lego $OUT /tmp/g/gsplat-1.5.3 /tmp/g/gsplat-main
tail -n 2 $OUT/build-*.log
tail -n 1 $OUT/train-ck.log
echo "at $SECONDS s"
