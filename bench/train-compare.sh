#!/usr/bin/env bash
# train-compare.sh: issue 12's training table in one call on one GPU machine: ours and gsplat
# 1.5.3 train the same scene with the same recipe for ITERS iterations (default 30,000), held-out
# PSNR measured with the clock stopped at CHECKPOINTS (default 7000,12500) and at the end, one
# training at a time on the GPU:
#   1. gsplat's CUDA extension is JIT-built (at most BUILD_TIMEOUT seconds, default 300) before
#      anything is timed, so the build's CPU load does not fall into a timed run;
#   2. `splat-train train` with the defaults (plus the `--set` arguments in OURS, e.g.
#      "--set clone_opacity=share");
#   3. bench/gsplat_train.py --init aabb (splat-train's default init) with --checkpoints.
# Then one table: per checkpoint both trainers' train time, PSNR and splats, and the time ratio.
#
# usage: bench/train-compare.sh BIN_DIR SCENE GSPLAT_CHECKOUT OUT
#   BIN_DIR holds splat-train (bench/gpu-bundle.sh); GSPLAT_CHECKOUT a gsplat source tree with its
#   glm submodule (gsplat/cuda/csrc/third_party/glm); OUT gets ours.json, ours.log, gsplat.log,
#   build.log and table.txt. About 7 minutes on an H200 at 30,000 iterations.
set -uo pipefail
bin=${1:?bin dir}
scene=${2:?scene}
gsplat=${3:?gsplat checkout}
out=${4:?out dir}
here=$(cd "$(dirname "$0")" && pwd)
iters=${ITERS:-30000}
checkpoints=${CHECKPOINTS:-7000,12500}
mkdir -p "$out"
name=$(basename "$gsplat")
rm -rf "/tmp/$name" && cp -r "$gsplat" "/tmp/$name"
start=$SECONDS
(cd "/tmp/$name" && TORCH_EXTENSIONS_DIR="/tmp/tx-$name" MAX_JOBS=${MAX_JOBS:-$(nproc)} \
  TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST:-9.0} timeout "${BUILD_TIMEOUT:-300}" \
  python3 -c "from gsplat.cuda._backend import _C; print('built', _C)") >"$out/build.log" 2>&1
echo "gsplat build: exit $? after $((SECONDS - start)) s" | tee -a "$out/build.log"
# shellcheck disable=SC2086
"$bin/splat-train" train --scene "$scene" --out /tmp/train-compare-ours --set iterations="$iters" \
  --set checkpoints="$checkpoints" --set save_ply=0 ${OURS:-} >"$out/ours.log" 2>&1
cp /tmp/train-compare-ours/result.json "$out/ours.json"
(cd "/tmp/$name" && PYTHONPATH="/tmp/$name" TORCH_EXTENSIONS_DIR="/tmp/tx-$name" \
  python3 "$here/gsplat_train.py" --scene "$scene" --iterations "$iters" --init aabb \
  --checkpoints "$checkpoints" --report-every 2500) >"$out/gsplat.log" 2>&1
python3 - "$out" <<'PY' | tee "$out/table.txt"
import json, sys
out = sys.argv[1]
r = json.load(open(f"{out}/ours.json"))
m = r["metrics"]
ours = {c["iter"]: (c["train_s"], c["psnr_db"], c["splats"]) for c in r.get("checkpoints", [])}
ours[m["iterations"]] = (m["train_s"], m["psnr_db"], m["splats_final"])
peer = {}
for line in open(f"{out}/gsplat.log"):
    if not line.startswith("{"):
        continue
    j = json.loads(line)
    if "checkpoint" in j:
        peer[j["checkpoint"]] = (j["train_s"], j["psnr_db"], j["splats"])
    elif "train_s" in j and "iterations" in j:
        peer[j["iterations"]] = (j["train_s"], j["psnr_db"], j["splats_final"])
print(f"device: {r['device']['name']} ({r['device']['driver']}), rasterize_bwd "
      f"{r['device'].get('rasterize_bwd', '?')}, ours {r['config'].get('clone_opacity', '?')} clones")
print("| checkpoint | ours | gsplat 1.5.3 | time ratio | PSNR difference |")
print("| --- | --- | --- | --- | --- |")
for it in sorted(set(ours) | set(peer)):
    o, g = ours.get(it), peer.get(it)
    fmt = lambda x: f"{x[0]:.1f} s, {x[1]:.2f} dB, {x[2]:,}" if x else "-"
    ratio = f"{o[0] / g[0]:.2f}" if o and g else "-"
    diff = f"{o[1] - g[1]:+.2f} dB" if o and g else "-"
    print(f"| {it:,} | {fmt(o)} | {fmt(g)} | {ratio} | {diff} |")
PY
