#!/usr/bin/env bash
# Session 19, call 1: bwd_chain and bwd_state on the GPU (bench/chain-compare.sh: a 7,000-iteration
# Lego checkpoint replayed and random 400k / 1M, each (state, chain); its alternated trainings are
# left out, PAIRS=0, since the gate makes them); then, if the replay's fastest (state, chain) beats the defaults
# on the replay, splatsweep gates it (bench/lab-gates.sh, 7,000 iterations, 3 pairs, default rules).
set -uo pipefail
. .data/pre.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
PAIRS=0 timeout 300 bash bench/chain-compare.sh $B /tmp/ds/nerf_synthetic_lego $OUT/chain
echo "chain-compare done at $SECONDS s"
read -r st ch < <(sed -n 's/^trainings: the defaults against bwd_state \([a-z]*\), bwd_chain \([0-9]\)$/\1 \2/p' $OUT/chain/train.txt)
ms() { awk -v c="state $1, chain $2" '/^device/ {on = index($0, c) > 0} on && /ms\/iteration/ {split($0, a, ": "); split(a[2], b, " "); print b[1]; exit}' $OUT/chain/iter-replay.txt; }
d=$(ms shared 1); b=$(ms "$st" "$ch")
echo "replay: defaults $d ms, best other ($st, $ch) $b ms"
if [ -n "$b" ] && awk -v d="$d" -v b="$b" 'BEGIN {exit !(b < d)}'; then
  sed -e "s/^  off: .*/  off: {bwd_state: shared, bwd_chain: \"1\"}/" \
      -e "s/^  on: .*/  on: {bwd_state: $st, bwd_chain: \"$ch\"}/" \
      -e "s/^name: .*/name: bwd-chain-best/" sweeps/gate-bwd-chain.yaml > sweeps/gate-bwd-chain-best.yaml
  PATH=$B:$PATH timeout $((590 - SECONDS)) bash bench/lab-gates.sh $B $OUT/gates 7000 3 bwd-chain-best
fi
echo "at $SECONDS s"
