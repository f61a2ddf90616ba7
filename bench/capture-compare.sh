#!/usr/bin/env bash
# Trains a real capture (a transforms.json or COLMAP folder) with ours and with gsplat on the same
# GPU, one after the other in one call, with one recipe (docs/scenes.md "A recipe for real
# captures": world normalised by the training cameras, every 8th view held out, black background,
# random init in a cube of the scene extent, 100k points), and prints both results and the time
# ratio. gsplat is never part of this project: GSPLAT names a checkout carried to the GPU machine
# (its CUDA extension is JIT-built there on first use).
#   bench/capture-compare.sh SCENE [ITERATIONS] [RESOLUTION_SCALE]
# Environment: SPLAT_TRAIN (default build-rel/bin/splat-train), GSPLAT (a gsplat checkout; unset:
# ours only), OUT (default /tmp/capture-compare).
set -euo pipefail
scene=${1:?scene folder}
iters=${2:-7000}
res=${3:-2}
st=${SPLAT_TRAIN:-build-rel/bin/splat-train}
out=${OUT:-/tmp/capture-compare}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
"$st" train --scene "$scene" --out "$out/ours" --set iterations="$iters" --set background=black \
  --set resolution_scale="$res" --set init=random --set init_box=extent --set init_extent=1 \
  --set init_points=100000 >"$out/ours.log" 2>&1 || { tail -20 "$out/ours.log"; exit 1; }
tail -2 "$out/ours.log"
ours=$(jq -c '{trainer: "ours", iterations: .metrics.iterations, train_s: .metrics.train_s,
               psnr_db: .metrics.psnr_db, ssim: .metrics.ssim, splats_final: .metrics.splats_final}' \
  "$out/ours/result.json")
echo "$ours"
if [ -n "${GSPLAT:-}" ]; then
  PYTHONPATH="$GSPLAT${PYTHONPATH:+:$PYTHONPATH}" python3 "$here/gsplat_train.py" --scene "$scene" \
    --iterations "$iters" --resolution-scale "$res" --background black --init random \
    --init-extent 1 --init-points 100000 --report-every 1000 >"$out/gsplat.log" 2>&1 ||
    { tail -30 "$out/gsplat.log"; exit 1; }
  theirs=$(tail -1 "$out/gsplat.log")
  echo "$theirs"
  python3 - "$ours" "$theirs" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
print(f"time ratio ours/gsplat {a['train_s'] / b['train_s']:.3f}; PSNR ours - gsplat "
      f"{a['psnr_db'] - b['psnr_db']:+.2f} dB; splats {a['splats_final']} vs {b['splats_final']}")
PY
fi
