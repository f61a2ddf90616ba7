#!/usr/bin/env bash
# device call 2: the iteration benchmark, random (400k, 1M) and replayed (Lego checkpoints at
# 7,000 and 30,000), ours with both backwards and gsplat 1.5.3 and main in one call
# (bench/replay-compare.sh; gsplat main built with only its 3DGS kernels for RGB).
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
mkdir -p /tmp/gs && tar xJf .data/gsplatmain.tar.xz -C /tmp/gs
export BUILD_3DGS=1 NUM_CHANNELS=3 BUILD_TIMEOUT=240
timeout 560 bash bench/replay-compare.sh $B /tmp/ds/nerf_synthetic_lego $OUT/replay .data/gsplat153 /tmp/gs/gsplatmain
tail -2 $OUT/replay/build-*.log
echo "at $SECONDS s"
