#!/usr/bin/env bash
# lab-gates.sh: splatsweep itself gates the lab's changes on one machine, as a user runs it:
# `splatsweep local SPEC --workers 1` with the default contamination rules, one gate after the
# other, from the gate specs in sweeps/ with the iteration budget and the number of pairs given
# here (the rest of each spec as it is). Optionally a hog is started during one run of one gate,
# to show that the sampler flags it and the pair is re-run once.
#
# Usage: bench/lab-gates.sh BIN OUT ITERATIONS PAIRS GATE[:HOG]...
#   BIN: folder holding splatsweep and splat-train; OUT: results (one .db, .out and .log per
#   gate); GATE: a sweeps/gate-NAME.yaml name (radix-ballot, ...) or "sigma-skip" (sigma_skip
#   alone, which gate-bwd-warp-skip.yaml toggles together with bwd_warp_skip);
#   HOG: cpu (one busy core for 8 s) or gpu (a second splat-train training on the same GPU for
#   8 s), started 2 s into the third run of that gate.
# The scene comes from $SW_DATASETS (the specs name nerf_synthetic_lego).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:?bin}
OUT=${2:?out}
ITER=${3:?iterations}
PAIRS=${4:?pairs}
shift 4
mkdir -p "$OUT"
for item in "$@"; do
  gate=${item%%:*}
  hog=""
  [ "$item" != "$gate" ] && hog=${item#*:}
  spec="$OUT/$gate.yaml"
  if [ "$gate" = sigma-skip ]; then
    sed -e 's/^name: .*/name: sigma-skip/' \
      -e 's/^  off: .*/  off: {sigma_skip: off}/' -e 's/^  on: .*/  on: {sigma_skip: on}/' \
      -e 's/^description: .*/description: "skip splats whose 3-sigma footprint misses the tile (sigma_skip alone)"/' \
      sweeps/gate-bwd-warp-skip.yaml >"$spec"
  else
    cp "sweeps/gate-$gate.yaml" "$spec"
  fi
  sed -i -e "s/^  iterations: .*/  iterations: $ITER/" \
    -e "s/^pairs: .*/pairs: {n: $PAIRS, max: $PAIRS, order: alternate, sequential: false}/" "$spec"
  echo "== $gate${hog:+ (with a $hog hog in its third run)}: $(grep -E '^  (off|on):' "$spec" | tr -s ' ' | tr '\n' ' ')"
  start=$(date +%s)
  "$BIN/splatsweep" local "$spec" --workers 1 --db "$OUT/$gate.db" >"$OUT/$gate.out" 2>"$OUT/$gate.log" &
  local_pid=$!
  if [ -n "$hog" ]; then
    # The third run's start, as the worker logs it.
    while kill -0 $local_pid 2>/dev/null &&
      [ "$(grep -c 'attempt 1) started in' "$OUT/$gate.log" || true)" -lt 3 ]; do sleep 0.2; done
    sleep 2
    hog_start=$(date +%s%3N)
    if [ "$hog" = cpu ]; then
      timeout 8 sh -c 'while :; do :; done' &
    else
      timeout 8 "$BIN/splat-train" train --scene "${SW_DATASETS%%:*}/nerf_synthetic_lego" \
        --out "$OUT/hog-run" --set iterations=100000 --set save_ply=0 >/dev/null 2>&1 &
    fi
    echo "   $hog hog started at $hog_start (ms since epoch) for 8 s"
  fi
  wait $local_pid || echo "   splatsweep local exited $?"
  echo "   $(($(date +%s) - start)) s"
  sed -n '1,40p' "$OUT/$gate.out"
done
