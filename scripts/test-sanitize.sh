#!/usr/bin/env bash
# Builds everything with AddressSanitizer + UndefinedBehaviorSanitizer (-DSW_SANITIZE=ON) and
# warnings as errors in build-asan/, then runs every test under options that turn any report into a
# failed test: ASan and UBSan stop at the first error, LeakSanitizer checks at exit of every process
# (Check's forked test children included, whose non-zero exit fails the test). Leaks inside the
# Vulkan driver stack are suppressed by tests/lsan.supp (driver libraries only, never our code).
# Extra arguments go to ctest, e.g. `scripts/test-sanitize.sh -R test_store`.
# SW_BUILD_DIR overrides the build folder; SW_JOBS the parallelism (default: every core).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
./scripts/install-deps.sh
build=${SW_BUILD_DIR:-build-asan}
jobs=${SW_JOBS:-$(nproc)}
cmake -S . -B "$build" -DSW_SANITIZE=ON -DSW_WERROR=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"$jobs"

# abort_on_error=0 keeps the exit status (1) so ctest and Check see a plain failure, not a core dump.
export ASAN_OPTIONS="halt_on_error=1:abort_on_error=0:detect_leaks=1:detect_stack_use_after_return=0:strict_string_checks=1:check_initialization_order=1:${ASAN_OPTIONS:-}"
export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0:${LSAN_OPTIONS:-}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:${UBSAN_OPTIONS:-}"
cd "$build"
# Instrumented code runs several times slower, lavapipe's shaders included: a long per-test limit.
ctest --output-on-failure -j"$jobs" --timeout 2400 "$@"
