#!/usr/bin/env bash
# device call: splatsweep gates ssim_layout interleaved -> planar at 7,000 iterations with 3 pairs
# (deterministic base: equal PSNR exactly), then one 30,000-iteration training with each layout
# (defaults otherwise, checkpoints 7,000 and 12,500), planar first, as time allows.
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
S=/tmp/ds/nerf_synthetic_lego
PATH=$B:$PATH timeout 300 bash bench/lab-gates.sh $B /tmp/gates 7000 3 ssim-planar > $OUT/gates.txt 2>&1
cat $OUT/gates.txt
cp /tmp/gates/*.out /tmp/gates/*.db $OUT/ 2>/dev/null
echo "gate done at $SECONDS s"
for lay in planar interleaved; do
  left=$((${LIMIT:-520} - SECONDS))
  [ $left -lt 120 ] && { echo "no time for $lay ($left s left)"; break; }
  timeout $left $B/splat-train train --scene $S --out /tmp/o30-$lay --set iterations=30000 \
    --set checkpoints=7000,12500 --set save_ply=0 --set ssim_layout=$lay > $OUT/ours-30k-$lay.log 2>&1
  cp /tmp/o30-$lay/result.json $OUT/ours-30k-$lay.json 2>/dev/null
  python3 - $OUT/ours-30k-$lay.json $lay <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); m = r["metrics"]
print("ours", sys.argv[2], {k: m.get(k) for k in ("train_s", "psnr_db", "splats_final")})
for c in r.get("checkpoints", []): print("  checkpoint", c)
for k in r["kernels"]: print("  %-14s %9.1f ms %5.1f%%" % (k["name"], k["gpu_ms"], 100 * k["share"]))
PY
  echo "at $SECONDS s"
done
