#!/usr/bin/env bash
# Builds everything with warnings as errors and runs every test (ctest). The README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
build=${SW_BUILD_DIR:-build}
cmake -S . -B "$build" -DSW_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)"
cd "$build"
ctest --output-on-failure -j"$(nproc)" --timeout 900 "$@"
