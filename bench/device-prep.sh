#!/usr/bin/env bash
# device-prep.sh: fills the git-ignored folders a device call carries (`carry: [".data", ".gl"]`,
# 64 MiB a call with the tree) for the GPU comparisons (train-compare.sh, replay-compare.sh,
# lab-gates.sh, iter_bench against gsplat_iter.py):
#   .gl/      the Vulkan loader and glvnd packages the NVIDIA driver needs (the device README);
#   .data/devbundle.tar.xz   bench/gpu-bundle.sh's Release bundle, packed (about 11 MB);
#   .data/ds/nerf_synthetic_lego/   the Lego's train views and transforms (42 MB; never committed);
#   .data/gsplat-1.5.3.tar.xz       gsplat 1.5.3's sources with its glm submodule (GSPLAT_GIT and
#                                   GLM_GIT: bare or mirrored clones of both; skipped if unset);
#   .data/pre.sh   sourced first in the call: unpacks the loaders and the bundle, exports B (the
#                  bundle's bin) and LD_LIBRARY_PATH, copies the Lego to /tmp/ds.
# usage: bench/device-prep.sh LEGO_DIR   (e.g. ../shared/datasets/nerf_synthetic_lego)
set -euo pipefail
lego=$(cd "${1:?Lego folder}" && pwd)
cd "$(dirname "$0")/.."
mkdir -p .gl .data/ds /tmp/amd64/partial
o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
# shellcheck disable=SC2086
apt-get $o update >/dev/null
# shellcheck disable=SC2086
(cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)
bash bench/gpu-bundle.sh build-rel .devbundle >/dev/null
tar cJf .data/devbundle.tar.xz .devbundle
rm -rf .data/ds/nerf_synthetic_lego && mkdir -p .data/ds/nerf_synthetic_lego
cp -r "$lego/train" "$lego/transforms_train.json" .data/ds/nerf_synthetic_lego/
if [ -n "${GSPLAT_GIT:-}" ] && [ -n "${GLM_GIT:-}" ]; then
  t=$(mktemp -d) && mkdir -p "$t/gsplat-1.5.3"
  # The sources the build needs. A mirror without the large blobs prints "invalid object" for
  # the docs' assets, which are not archived: harmless.
  git -C "$GSPLAT_GIT" archive v1.5.3 -- gsplat setup.py README.md LICENSE MANIFEST.in |
    tar x -C "$t/gsplat-1.5.3"
  glm=$(git -C "$GSPLAT_GIT" ls-tree v1.5.3 gsplat/cuda/csrc/third_party/glm | awk '{print $3}')
  mkdir -p "$t/gsplat-1.5.3/gsplat/cuda/csrc/third_party/glm"
  git -C "$GLM_GIT" archive "$glm" glm | tar x -C "$t/gsplat-1.5.3/gsplat/cuda/csrc/third_party/glm"
  tar cJf .data/gsplat-1.5.3.tar.xz -C "$t" gsplat-1.5.3 && rm -rf "$t"
fi
cat >.data/pre.sh <<'PRE'
# Sourced first in every device call (bench/device-prep.sh wrote it).
for d in .gl/*.deb; do dpkg -x "$d" /; done; ldconfig
if [ -e /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ]; then
  export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
  export __EGL_VENDOR_LIBRARY_FILENAMES=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
fi
tar xJf .data/devbundle.tar.xz -C /tmp
export B=/tmp/.devbundle/bin LD_LIBRARY_PATH=/tmp/.devbundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
mkdir -p /tmp/ds && cp -r .data/ds/nerf_synthetic_lego /tmp/ds/
[ -e .data/gsplat-1.5.3.tar.xz ] && mkdir -p /tmp/g && tar xJf .data/gsplat-1.5.3.tar.xz -C /tmp/g
true
PRE
# A call carries the tree (tracked and untracked-not-ignored files) with .data and .gl: 64 MiB in all.
total=$({ find .data .gl -type f -printf '%s\n'
  git ls-files -z --cached --others --exclude-standard | xargs -0 -r stat -c '%s' 2>/dev/null; } |
  awk '{s += $1} END {printf "%d", s}')
awk -v s="$total" 'BEGIN {printf "carried with the tree: %.1f MiB of 64\n", s / 1048576}'
[ "$total" -le $((64 * 1048576)) ] || { echo "device-prep.sh: over the 64 MiB a call carries" >&2; exit 1; }
