#!/usr/bin/env bash
# device call 3: the iteration benchmark side by side (bench/replay-compare.sh): gsplat 1.5.3 and
# gsplat main (90d7b4b, 20 Aug 2026; BUILD_3DGS=1 NUM_CHANNELS=3: only its 3DGS kernels for RGB)
# JIT-built in the background while one 30,000-iteration Lego training with today's defaults
# writes the 7,000 and 30,000 checkpoints; then ours (the per-splat backward, the trainer's
# choice on this GPU) and both gsplats on random 400k / 1M and on both checkpoints replayed.
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p /tmp/g && tar xJf .data/gsplat.tar.xz -C /tmp/g
python3 -c "import torch; print('torch', torch.__version__, torch.version.cuda)"
BUILD_3DGS=1 NUM_CHANNELS=3 MODES=splat BUILD_TIMEOUT=300 timeout 560 \
  bash bench/replay-compare.sh $B /tmp/ds/nerf_synthetic_lego $OUT /tmp/g/gsplat153 /tmp/g/gsplatmain
tail -2 $OUT/build-*.log
tail -1 $OUT/train-ck.log
echo "at $SECONDS s"
