#!/usr/bin/env bash
# bench/repro.sh: the reproducibility matrix of issue 12 on a real GPU: trainings of the Lego with
# one config, in both modes (deterministic off and on), five runs each that differ only in what
# must not matter: the first with cold (empty) pipeline and driver shader caches, then a plain
# one, one with --progress, one with checkpoint evaluations in the middle, one under a CPU hog
# (one busy shell loop per core). It prints one line per run (splats at the checkpoints and at
# the end, test PSNR, train_s, the first 16 hex digits of final.ply's sha256) and per mode the
# spread of splats and PSNR; in deterministic mode every final.ply must be the same file.
#
# usage: SW_DATASETS=DIR[:DIR...] bench/repro.sh [SPLAT_TRAIN] [OUT]
#   SPLAT_TRAIN  the trainer (default: build/bin/splat-train)
#   OUT          working folder (default: a new folder under /tmp); runs go to OUT/MODE-VARIANT
# Environment:
#   ITERS=7000         iterations per run
#   LR_STEPS=30000     position-lr decay length: 30000 makes the first 7,000 iterations those of
#                      the 30,000-iteration recipe (the runaway was already visible there: 352k
#                      splats at 7,000 against 292k)
#   CHECKPOINTS=3500,6000  checkpoints of the checkpoint variant
#   MODES="off on"     which deterministic modes to run
#   VARIANTS="cold plain progress checkpoints cpu_hog"  which runs of each mode (any name
#                      starting cpu_hog runs under the hog: "cpu_hog1 cpu_hog2 ..." repeats it)
#   EXTRA="--set k=v"  more trainer arguments for every run
# Budget on an H200: a 7,000-iteration Lego run takes ~26 s of training (plus ~5 s of loading and
# evaluation), so the 10 runs take about 6 minutes (deterministic ones somewhat longer).
# Exit status: 0 when every deterministic final.ply is identical (or MODES has no "on"), 1 if
# not, 2 on a failed run or missing input.
set -u
ST=${1:-build/bin/splat-train}
OUT=${2:-$(mktemp -d /tmp/repro.XXXXXX)}
ITERS=${ITERS:-7000}
LR_STEPS=${LR_STEPS:-30000}
CHECKPOINTS=${CHECKPOINTS:-3500,6000}
MODES=${MODES:-off on}
VARIANTS=${VARIANTS:-cold plain progress checkpoints cpu_hog}
EXTRA=${EXTRA:-}
if [ ! -x "$ST" ]; then echo "repro.sh: no trainer at $ST" >&2; exit 2; fi
SCENE=""
IFS=: read -r -a dirs <<<"${SW_DATASETS:-}"
for d in "${dirs[@]}"; do
  for s in "$d/nerf_synthetic_lego" "$d/nerf_synthetic_lego.zip" "$d/nerf_synthetic_lego.tar.gz"; do
    if [ -z "$SCENE" ] && [ -e "$s" ]; then SCENE=$s; fi
  done
done
if [ -z "$SCENE" ]; then echo "repro.sh: nerf_synthetic_lego not found in SW_DATASETS" >&2; exit 2; fi
mkdir -p "$OUT"
echo "repro: $ST on $SCENE, $ITERS iterations (lr decay over $LR_STEPS), out $OUT"
"$ST" devices | sed 's/^/  /'

hog_pids=()
hog_start() {
  local n
  n=$(nproc)
  for _ in $(seq "$n"); do
    bash -c 'while :; do :; done' &
    hog_pids+=($!)
  done
}
hog_stop() {
  for p in "${hog_pids[@]}"; do kill "$p" 2>/dev/null; done
  for p in "${hog_pids[@]}"; do wait "$p" 2>/dev/null; done
  hog_pids=()
}
trap hog_stop EXIT

# run MODE VARIANT: one training; its line of the table goes to OUT/table.
run() {
  local mode=$1 variant=$2 dir="$OUT/$1-$2"
  local args=(train --scene "$SCENE" --out "$dir" --set "iterations=$ITERS"
              --set "lr_means_steps=$LR_STEPS" --set "deterministic=$mode")
  # shellcheck disable=SC2206
  args+=($EXTRA)
  local cache="$OUT/pipeline-cache.bin"
  # The driver's own shader cache (NVIDIA: __GL_SHADER_DISK_CACHE_PATH, Mesa: MESA_SHADER_CACHE_DIR)
  # goes to a folder of this run's, empty for the cold run.
  local dcache="$OUT/driver-cache"
  case $variant in
    cold) rm -f "$cache"; rm -rf "$dcache" ;;
    progress) args+=(--progress) ;;
    checkpoints) args+=(--set "checkpoints=$CHECKPOINTS") ;;
  esac
  case $variant in cpu_hog*) hog_start ;; esac
  mkdir -p "$dcache"
  GS_PIPELINE_CACHE=$cache __GL_SHADER_DISK_CACHE_PATH=$dcache MESA_SHADER_CACHE_DIR=$dcache \
    "$ST" "${args[@]}" >"$dir.stdout" 2>"$dir.stderr"
  local rc=$?
  case $variant in cpu_hog*) hog_stop ;; esac
  if [ $rc -ne 0 ] || [ ! -f "$dir/result.json" ]; then
    echo "repro.sh: $mode/$variant failed (exit $rc): $(tail -1 "$dir.stderr")" >&2
    exit 2
  fi
  python3 - "$dir" "$mode" "$variant" >>"$OUT/table" <<'EOF'
import hashlib, json, sys
d, mode, variant = sys.argv[1:4]
r = json.load(open(d + "/result.json"))
m = r["metrics"]
cps = " / ".join("%d@%d" % (c["splats"], c["iter"]) for c in r.get("checkpoints", []) if c["iter"])
sha = hashlib.sha256(open(d + "/final.ply", "rb").read()).hexdigest()
print("%s\t%s\t%d\t%.4f\t%.1f\t%s\t%s" % (mode, variant, m["splats_final"], m["psnr_db"],
                                          m["train_s"], sha[:16], cps or "-"))
EOF
  tail -1 "$OUT/table"
}

: >"$OUT/table"
printf 'mode\tvariant\tsplats\tpsnr_db\ttrain_s\tfinal.ply\tcheckpoint splats\n'
for mode in $MODES; do
  for variant in $VARIANTS; do run "$mode" "$variant"; done
done

python3 - "$OUT/table" <<'EOF'
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
status = 0
for mode in dict.fromkeys(r[0] for r in rows):
    rs = [r for r in rows if r[0] == mode]
    sp = [int(r[2]) for r in rs]
    ps = [float(r[3]) for r in rs]
    ts = [float(r[4]) for r in rs]
    shas = sorted(set(r[5] for r in rs))
    print("deterministic=%s: splats %d..%d (mean %.0f, spread %.2f%%), PSNR %.3f..%.3f dB "
          "(spread %.3f dB), train_s mean %.1f, %d distinct final.ply" %
          (mode, min(sp), max(sp), statistics.mean(sp),
           100.0 * (max(sp) - min(sp)) / statistics.mean(sp), min(ps), max(ps), max(ps) - min(ps),
           statistics.mean(ts), len(shas)))
    if mode == "on" and len(shas) != 1:
        print("  NOT bit-identical: " + ", ".join(shas))
        status = 1
sys.exit(status)
EOF
