#!/usr/bin/env bash
# The README's main job: installs what is needed, builds, and runs a real A/B gate on the embedded
# defaults: `splatsweep local` with local worker processes, the SQLite store under results/, a
# generated scene, and the Vulkan pipeline (lavapipe when the machine has no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
build=${SW_BUILD_DIR:-build}
cmake -S . -B "$build" -DSW_WERROR=ON >/dev/null
cmake --build "$build" -j"$(nproc)" --target splatsweep splat-train
mkdir -p results
exec "$build/bin/splatsweep" local "${1:-sweeps/quickstart.yaml}" --workers "${SW_WORKERS:-2}" \
  --db "${SW_DB:-results/quickstart.db}"
