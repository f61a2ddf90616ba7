#!/usr/bin/env bash
# device call 2: splatsweep gates sort pairs -> depth_first at 7,000 iterations with 3 pairs
# (deterministic base), then 30,000-iteration trainings (defaults: in_flight 2, sort depth_first;
# checkpoints 7,000 and 12,500) with in_flight 2 and 1, as time allows.
. .data/pre.sh
S=/tmp/ds/nerf_synthetic_lego
PATH=$B:$PATH timeout 300 bash bench/lab-gates.sh $B /tmp/gates 7000 3 sort-depth-first > $OUT/gates2.txt 2>&1
cat $OUT/gates2.txt
cp /tmp/gates/*.out /tmp/gates/*.db $OUT/ 2>/dev/null
echo "gate done at $SECONDS s"
for f in 2 1; do
  left=$((${LIMIT:-585} - SECONDS))
  [ $left -lt 125 ] && { echo "no time for in_flight $f ($left s left)"; break; }
  timeout $left $B/splat-train train --scene $S --out /tmp/o30-$f --set iterations=30000 \
    --set checkpoints=7000,12500 --set save_ply=0 --set in_flight=$f > $OUT/ours-30k-in-flight-$f.log 2>&1
  cp /tmp/o30-$f/result.json $OUT/ours-30k-in-flight-$f.json 2>/dev/null
  python3 - $OUT/ours-30k-in-flight-$f.json $f <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); m = r["metrics"]
print("ours in_flight", sys.argv[2], {k: m.get(k) for k in ("train_s", "psnr_db", "splats_final", "gpu_busy_frac")})
for c in r.get("checkpoints", []): print("  checkpoint", c)
for k in r["kernels"]: print("  %-14s %6d calls %9.1f ms %5.1f%%" % (k["name"], k["calls"], k["gpu_ms"], 100 * k["share"]))
PY
  echo "at $SECONDS s"
done
