#!/usr/bin/env bash
# Session 23, call C: call A2 (bench/results/h100-2026-12-07/callA2.sh: iteration benchmark, ours
# with two in flight and one, gsplat 1.5.3, random 400k / 1M and the 7k and 30k Lego checkpoints
# replayed) and then call B's sort block-size comparison (bench/sort-items.sh with the default
# bundle and GS_SORT_ITEMS 2 and 4 builds, A B C A) in one call, since device starts are scarce.
set -uo pipefail
bash bench/results/h100-2026-12-07/callA2.sh
echo "A2 done at $SECONDS s"
mkdir -p /tmp/items && tar xJf .data/items.tar.xz -C /tmp/items
export B=/tmp/.devbundle/bin LD_LIBRARY_PATH=/tmp/.devbundle/lib
[ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
  __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
timeout $((540 - SECONDS)) bash bench/sort-items.sh $OUT/items $B /tmp/items/items2/bin /tmp/items/items4/bin -- /tmp/ck/checkpoint-7000.ply /tmp/ds/nerf_synthetic_lego
echo "sort-items done at $SECONDS s"
