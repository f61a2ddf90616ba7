#!/usr/bin/env bash
# bwd_chain and bwd_state side by side on one GPU machine, in one call (docs/trainer.md "Runs back
# to back"): a subgroup of the per-splat rasterize backward walking 1, 2 or 4 runs of a tile back to
# back, with the runs' states in shared memory or read from the forward's buffer.
#   1. one training of the real scene to ITERS (default 7,000) with the defaults, writing the
#      checkpoint the replays read (its time is the defaults' first, cold-cache one);
#   2. iter_bench on that checkpoint through the training views, then on random Gaussians (NS,
#      default 400000,1000000), each (state, chain): ms per iteration, GPU span and busy,
#      rasterize_bwd's share;
#   3. PAIRS (default 2) alternated trainings to ITERS, the defaults and the replay's fastest
#      (state, chain) other than the defaults: train_s, PSNR, splats (a first look; the verdict
#      is a gate's, sweeps/gate-bwd-chain.yaml).
#   bench/chain-compare.sh BIN_DIR SCENE OUT
# BIN_DIR holds splat-train and iter_bench (bench/gpu-bundle.sh). Writes OUT/train.txt,
# OUT/iter-replay.txt, OUT/iter-random.txt and prints the summary lines.
set -uo pipefail
bin=${1:?bin dir}
scene=${2:?scene}
out=${3:?out dir}
iters=${ITERS:-7000}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One training to $iters: OUT_DIR [--set k=v]...; prints its train_s, PSNR and splats.
train() {
  local dir=$1
  shift
  timeout 600 "$bin/splat-train" train --scene "$scene" --out "$dir" --set iterations="$iters" \
    "$@" >"$dir.log" 2>&1
  python3 - "$dir/result.json" "${*:-defaults}" <<'EOF' || tail -3 "$dir.log"
import json, sys
m = json.load(open(sys.argv[1]))["metrics"]
print(f"{sys.argv[2]}: train_s {m['train_s']:.2f} psnr {m['psnr_db']:.3f} splats {m['splats_final']}")
EOF
}

summary() { grep -E "^device|ms/iteration|rasterize_bwd " "$1" | sed 's/^device: .*, step /  step /'; }

train "$work/ck" --set checkpoints="$iters" --set checkpoint_ply=1 --set save_ply=0 | tee "$out/train.txt"
ply="$work/ck/checkpoint-$iters.ply"
for st in shared global; do
  for ch in 1 2 4; do
    timeout 120 "$bin/iter_bench" --ply "$ply" --scene "$scene" --warmup 20 --iters 100 \
      --rasterize-bwd splat --bwd-state $st --bwd-chain $ch
  done
done >"$out/iter-replay.txt" 2>&1
summary "$out/iter-replay.txt"
for st in shared global; do
  for ch in 1 2 4; do
    timeout 120 "$bin/iter_bench" --n "${NS:-400000,1000000}" --warmup 20 --iters 100 --rasterize-bwd splat \
      --bwd-state $st --bwd-chain $ch
  done
done >"$out/iter-random.txt" 2>&1
summary "$out/iter-random.txt"

# The replay's fastest (state, chain) other than the defaults (global, 1), by ms per iteration.
best=$(awk '/^device/ {match($0, /state [a-z]+, chain [0-9]/); c = substr($0, RSTART, RLENGTH)}
  /ms\/iteration/ {split($0, a, ": "); split(a[2], b, " ");
    if (c != "state global, chain 1" && (m == "" || b[1] + 0 < m)) {m = b[1] + 0; bc = c}}
  END {print bc}' "$out/iter-replay.txt")
st=$(echo "$best" | awk '{print $2}' | tr -d ,)
ch=$(echo "$best" | awk '{print $4}')
[ -n "$st" ] && [ -n "$ch" ] || { echo "chain-compare: no replay figures" >&2; exit 1; }
echo "trainings: the defaults against bwd_state $st, bwd_chain $ch" | tee -a "$out/train.txt"
for i in $(seq "${PAIRS:-2}"); do
  train "$work/d$i" --set save_ply=0
  train "$work/c$i" --set save_ply=0 --set bwd_state="$st" --set bwd_chain="$ch"
done | tee -a "$out/train.txt"
