#!/usr/bin/env bash
# device call 3: ours at 30,000 iterations (checkpoints 7,000 and 12,500), rasterize_bwd splat +
# tile_cull ellipse, clone_opacity copy (the recipe) then share.
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=/tmp/ds/nerf_synthetic_lego
for co in copy share; do
  timeout 140 $B/splat-train train --scene $S --out /tmp/o30-$co --set iterations=30000 --set checkpoints=7000,12500 \
    --set save_ply=0 --set clone_opacity=$co > $OUT/ours-30k-$co.log 2>&1
  cp /tmp/o30-$co/result.json $OUT/ours-30k-$co.json
  python3 - $OUT/ours-30k-$co.json $co <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); m = r["metrics"]
print("ours", sys.argv[2], r["device"], {k: m.get(k) for k in ("train_s", "psnr_db", "ssim", "splats_final", "splats_mean")})
for c in r.get("checkpoints", []): print("  checkpoint", c)
for k in r["kernels"]: print("  %-14s %9.1f ms %5.1f%%" % (k["name"], k["gpu_ms"], 100 * k["share"]))
PY
  echo "at $SECONDS s"
done
