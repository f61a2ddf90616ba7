#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz/ (clang, -DSW_FUZZ=ON: libFuzzer + ASan + UBSan) in
# build-fuzz/ and runs each for a fixed time on its seed corpus (tests/fuzz/corpus/TARGET). CI runs
# it from scripts/test.sh with the default; run it longer locally:
#   scripts/fuzz.sh            # 20 s per target
#   scripts/fuzz.sh 600        # 10 minutes per target
#   scripts/fuzz.sh 60 spec    # only the named targets
# New inputs that reach new code go to build-fuzz/corpus/TARGET (not the tree: copy the
# interesting ones into tests/fuzz/corpus/TARGET by hand, after `-merge=1` if many). A crash, a
# leak, undefined behaviour, a failed property or a timeout (10 s for one input) fails the script;
# the input is left in build-fuzz/crashes/ and named in the output. Reproduce with
#   build-fuzz/bin/fuzz_TARGET build-fuzz/crashes/TARGET-crash-...
# fix the parser at fault, and keep the input in tests/fuzz/corpus/TARGET. SW_JOBS targets run at
# once (default: every core); SW_BUILD_DIR overrides build-fuzz.
# The Debian libraries the targets call (libyaml, jansson, libspng, protobuf-c) are not
# instrumented here, so a fault inside one is found only by chance, with no coverage to guide the
# fuzzer there; scripts/fuzz-yaml-instrumented.sh builds libyaml from its source for that.
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-20}
shift || true
build=${SW_BUILD_DIR:-build-fuzz}
jobs=${SW_JOBS:-$(nproc)}
all=(codec spec config result gate scene colmap transforms png ply)
if [ $# -gt 0 ]; then targets=("$@"); else targets=("${all[@]}"); fi
CC=clang cmake -S . -B "$build" -DSW_FUZZ=ON -DSW_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  >/dev/null
cmake --build "$build" -j"$jobs" --target "${targets[@]/#/fuzz_}" >/dev/null
mkdir -p "$build/crashes"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
export ASAN_OPTIONS="detect_leaks=1:${ASAN_OPTIONS:-}"

run_one() {
  local t=$1 log="$build/fuzz-$1.log"
  mkdir -p "$build/corpus/$t"
  if "$build/bin/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
       -max_len=16384 -print_final_stats=1 -artifact_prefix="$build/crashes/$t-" \
       "$build/corpus/$t" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
    printf 'fuzz %-7s ok: %s runs, %s exec/s, coverage %s, corpus %s\n' "$t" \
      "$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")" \
      "$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")" \
      "$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)" \
      "$(ls "$build/corpus/$t" | wc -l) new + $(ls "tests/fuzz/corpus/$t" | wc -l) seeds"
  else
    echo "fuzz $t FAILED (log $log):" >&2
    grep -E 'ERROR|SUMMARY|property failed|artifact|Test unit written' "$log" | head -20 >&2
    return 1
  fi
}

failed=0
pids=()
for t in "${targets[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do sleep 1; done
  run_one "$t" &
  pids+=($!)
done
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || failed=1
done
exit $failed
