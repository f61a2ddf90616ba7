#!/usr/bin/env bash
# bench/runaway.sh: hunts the splat-count runaway of issue 12 on a real GPU. Starts RUNS trainings
# of one config at once on one GPU (so that they contend for it and for the CPU, the conditions
# the runaway came with), each with SW_LOG=debug so that every densification step is logged
# (iteration, splats before -> after, cloned, split, pruned), optionally under a CPU hog (one
# busy loop per core). Then prints per run the splats at each checkpoint and at the end, and the
# first densification step at which the run's count leaves the median of all runs by more than
# DEV percent, with the clone/split/prune counts of that step next to the median's, so that a
# runaway shows where and how it starts (a jump at one step: a state leak; a slow drift: the
# densification's own dynamics). Under SW_LOG=debug the trainer also describes each step's clone
# sources (gs_train_diag.h): the summary gives, at 3,000, 6,000 and the last step, how many there
# were and how many had been picked at the previous step too and three times or more.
#
# usage: SW_DATASETS=DIR bench/runaway.sh SPLAT_TRAIN OUT SPEC...
#   SPEC: NAME:KEY=V,KEY=V (extra --set keys of that run), e.g. f1:rasterize_bwd=splat
# Environment: ITERS (10000), LR_STEPS (30000: the 30k recipe's first ITERS), CHECKPOINTS
#   (7000), HOG (1: a CPU hog during the runs), DEV (5), EXTRA (more --set args for all).
set -u
ST=${1:?splat-train}
OUT=${2:?out}
shift 2
ITERS=${ITERS:-10000}
LR_STEPS=${LR_STEPS:-30000}
CHECKPOINTS=${CHECKPOINTS:-7000}
DEV=${DEV:-5}
SCENE="${SW_DATASETS%%:*}/nerf_synthetic_lego"
mkdir -p "$OUT"
hogs=()
if [ "${HOG:-1}" = 1 ]; then
  for _ in $(seq "$(nproc)"); do sh -c 'while :; do :; done' & hogs+=($!); done
fi
pids=()
for spec in "$@"; do
  name=${spec%%:*}
  sets=()
  if [ "$spec" != "$name" ]; then
    IFS=, read -r -a kv <<<"${spec#*:}"
    for x in "${kv[@]}"; do sets+=(--set "$x"); done
  fi
  # shellcheck disable=SC2086
  SW_LOG=debug "$ST" train --scene "$SCENE" --out "$OUT/$name" --set iterations="$ITERS" \
    --set lr_means_steps="$LR_STEPS" --set checkpoints="$CHECKPOINTS" "${sets[@]}" ${EXTRA:-} \
    >"$OUT/$name.log" 2>&1 &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
for h in "${hogs[@]}"; do kill "$h" 2>/dev/null; done
python3 - "$OUT" "$DEV" "$@" <<'PY'
import json, re, statistics, sys
out, dev, specs = sys.argv[1], float(sys.argv[2]), sys.argv[3:]
runs = {}
for s in specs:
    name = s.split(":")[0]
    # Each grow step's counts, and its clone sources (the densify-diag lines of gs_train_diag.h).
    steps, diag = {}, {}
    for line in open(f"{out}/{name}.log", errors="replace"):
        m = re.search(r"densify at (\d+): (\d+) -> (\d+) \(cloned (\d+), split (\d+), pruned (\d+)\)", line)
        if m:
            steps[int(m[1])] = tuple(int(x) for x in m.groups()[1:])
        m = re.search(r"densify-diag at (\d+): cloned (\d+),.*again ([0-9.]+)%, picked>=3 ([0-9.]+)%", line)
        if m:
            diag[int(m[1])] = (int(m[2]), float(m[3]), float(m[4]))
    try:
        r = json.load(open(f"{out}/{name}/result.json"))
    except (OSError, ValueError):
        r = {}
    runs[name] = (s, steps, r, diag)
iters = sorted(set().union(*[set(v[1]) for v in runs.values()]))
med = {i: statistics.median([v[1][i][1] for v in runs.values() if i in v[1]]) for i in iters}
for name, (s, steps, r, diag) in runs.items():
    cps = " ".join(f"{c['iter']}:{c['splats']}" for c in r.get("checkpoints", []))
    m = r.get("metrics", {})
    first = next((i for i in iters if i in steps and abs(steps[i][1] / med[i] - 1) * 100 > dev), None)
    where = "never" if first is None else (
        f"at {first}: {steps[first][0]} -> {steps[first][1]} (cloned {steps[first][2]}, split "
        f"{steps[first][3]}, pruned {steps[first][4]}) vs median {med[first]:.0f}")
    print(f"{s}: {r.get('status', 'no result')} splats {m.get('splats_final')} psnr {m.get('psnr_db')} "
          f"train_s {m.get('train_s')} checkpoints {cps}; leaves the median by >{dev:g}%: {where}")
    if diag:
        # Clone sources at a few steps: how many, how many were picked at the previous step too,
        # how many three times or more (a standing population of sources grows the model).
        marks = sorted({max((i for i in diag if i <= t), default=None) for t in (3000, 6000, 10**9)} - {None})
        print("    clone sources: " + "; ".join(
            f"{i}: {diag[i][0]}, again {diag[i][1]:.1f}%, picked>=3 {diag[i][2]:.1f}%" for i in marks))
PY
