#!/usr/bin/env bash
# sort-items.sh: the radix sort's block size on one GPU machine. GS_SORT_ITEMS (keys per
# invocation of a sort workgroup; 8 in the product: blocks of 2,048 keys) fixes how long one
# workgroup works in each of a pass's three dispatches (hist, scan, scatter). At a real scene's
# sizes a sort dispatch has about as many blocks as the GPU has SMs, so its time is close to one
# workgroup's latency: on an H100, radix_sort fits 0.141 ms fixed + 0.028 ns per key per pass
# over three workloads (bench/README.md, "The sort's fixed cost"). Builds made with
# `cmake -DSW_SORT_ITEMS=K` sort the same keys into the same order, bit for bit; this script runs
# each bundle's test_gpu_sort on the GPU, then times them in turn (A B ... A, so drift shows):
# the sort alone (fwd_bench --sort-only, its three steps, at the pair counts of the Lego replay and
# of random 400k / 1M) and the iteration benchmark (random 400k and 1M, and the replay of PLY
# through SCENE's training views when both are given).
#   bench/sort-items.sh OUT BUNDLE_BIN... [-- PLY SCENE]
# e.g. bench/sort-items.sh $OUT /tmp/.devbundle/bin /tmp/items2/bin -- ck-7000.ply /tmp/ds/lego
# Each BUNDLE_BIN holds fwd_bench, iter_bench and test_gpu_sort (bench/gpu-bundle.sh BUILD_DIR);
# OUT gets sort-items.txt. About 30 s per bundle on an H100. SORT_N, ITER_N and ITER_ARGS change
# the sizes (on lavapipe: SORT_N=20000 ITER_N=2000 ITER_ARGS="--size 128 --focal 178 --iters 3").
set -uo pipefail
out=${1:?out dir}
shift
bins=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do bins+=("$1"); shift; done
[ $# -gt 0 ] && shift
ply=${1:-}
scene=${2:-}
[ ${#bins[@]} -gt 0 ] || { echo "sort-items.sh: no bundle given" >&2; exit 2; }
for d in "${bins[@]}"; do
  for exe in fwd_bench iter_bench test_gpu_sort; do
    [ -x "$d/$exe" ] || { echo "sort-items.sh: $d has no $exe (bench/gpu-bundle.sh packs it)" >&2; exit 2; }
  done
done
mkdir -p "$out"
for d in "${bins[@]}" "${bins[0]}"; do
  echo "=== $d"
  timeout 120 "$d/test_gpu_sort" 2>&1 | tail -1
  timeout 120 "$d/fwd_bench" --sort-only --n "${SORT_N:-645000,1660000,4160000}" 2>&1 | grep -v INFO
  # shellcheck disable=SC2086 # ITER_ARGS is a list of arguments
  timeout 120 "$d/iter_bench" --n "${ITER_N:-400000,1000000}" ${ITER_ARGS:-} 2>&1 | grep -v INFO
  if [ -n "$ply" ]; then
    # shellcheck disable=SC2086
    timeout 120 "$d/iter_bench" --ply "$ply" --scene "$scene" ${ITER_ARGS:-} 2>&1 | grep -v INFO
  fi
done 2>&1 | tee "$out/sort-items.txt" | grep "===\|Checks\|ms/iteration\|radix\|sort of"
