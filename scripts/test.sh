#!/usr/bin/env bash
# Builds everything with warnings as errors and runs every test (ctest), then compiles everything
# again with clang, warnings as errors (compile only: the lab's Macs build with Apple clang, whose
# warnings differ from GCC's; SW_CLANG=0 skips it). The README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
build=${SW_BUILD_DIR:-build}
cmake -S . -B "$build" -DSW_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
(cd "$build" && ctest --output-on-failure -j"$(nproc)" --timeout 900 "$@")
if [ "${SW_CLANG:-1}" != 0 ]; then
  CC=clang cmake -S . -B "${build}-clang" -DSW_WERROR=ON >/dev/null
  cmake --build "${build}-clang" -j"$(nproc)" >/dev/null || {
    echo "clang build failed (warnings are errors):" >&2
    cmake --build "${build}-clang" -j1 2>&1 | grep -E 'error|warning' >&2
    exit 1
  }
  echo "clang build: ok"
fi
