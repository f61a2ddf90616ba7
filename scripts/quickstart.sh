#!/usr/bin/env bash
# The README's main job: installs what is needed, builds, and runs a real A/B gate on the embedded
# defaults: `splatsweep local` with local worker processes, the SQLite store under results/, a
# generated scene, and the Vulkan pipeline (lavapipe when the machine has no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
build=${SW_BUILD_DIR:-build}
mkdir -p results
echo "building into $build (log: results/build.log) ..."
if ! { cmake -S . -B "$build" &&
       cmake --build "$build" -j"$(nproc)" --target splatsweep splat-train; } >results/build.log 2>&1; then
  tail -n 40 results/build.log >&2
  echo "quickstart: the build failed; the whole log is in results/build.log" >&2
  exit 1
fi
echo "running ${1:-sweeps/quickstart.yaml} on ${SW_WORKERS:-2} local workers (a few minutes on a CPU) ..."
exec "$build/bin/splatsweep" local "${1:-sweeps/quickstart.yaml}" --workers "${SW_WORKERS:-2}" \
  --db "${SW_DB:-results/quickstart.db}"
