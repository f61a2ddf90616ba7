#!/usr/bin/env bash
# coord_soak.sh: the coordinator after 1,000 short runs with 3 real workers (separate processes,
# tcp on loopback, the fake trainer with ~0 s runs). Prints the Ready->Assign latency the
# coordinator measured (p50 / p99) and its resident memory (VmRSS) before and after.
#   bench/coord_soak.sh [BUILD_DIR] [RUNS] [WORKERS]      (defaults: build, 1000, 3)
set -euo pipefail
BUILD=${1:-build}
RUNS=${2:-1000}
NW=${3:-3}
SW="$BUILD/bin/splatsweep"
FAKE="$(cd "$BUILD/bin" && pwd)/fake_trainer"
T=$(mktemp -d /tmp/sw-soak-XXXXXX)
PORT=${SOAK_PORT:-19710}
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
PIDS=()
cleanup() {
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  sleep 1
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null || true; done
  rm -rf "$T"
}
trap cleanup EXIT
export SW_LOG=warn
"$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/soak.db" --insecure >"$T/coord.log" 2>&1 &
COORD=$!
PIDS+=($COORD)
sleep 1
rss() { awk '/VmRSS/ {print $2}' "/proc/$COORD/status"; }
echo "coordinator VmRSS at start: $(rss) kB"
for k in $(seq 1 "$NW"); do
  "$SW" worker --coordinator "$WORK" --insecure --id "soak-$k" --work-dir "$T/w$k" --shared-host >"$T/w$k.log" 2>&1 &
  PIDS+=($!)
done
cat >"$T/soak.yaml" <<YAML
name: coord-soak
kind: grid
trainer:
  exec:
    command: ["$FAKE", "train", "--out", "{out}", "{set}"]
base: {fake_sleep_s: 0}
parameters: {seed: [1]}
repeats: $RUNS
# The soak measures the coordinator under concurrent workers, not run times: its workers share
# the host on purpose (--shared-host), so their sub-second runs overlap.
contamination: {settle_s: 0, max_wait_s: 1, sample_interval_s: 1, shared_host: true}
YAML
start=$(date +%s.%N)
id=$("$SW" submit "$T/soak.yaml" --coordinator "$CTL")
while :; do
  "$SW" status "$id" --coordinator "$CTL" --format json >"$T/status.json"
  if [ "$(jq -r '[.sweeps[] | select(.status == "running")] | length' "$T/status.json")" = 0 ]; then break; fi
  sleep 2
done
end=$(date +%s.%N)
"$SW" status --coordinator "$CTL" --format json >"$T/status.json"
echo "runs: $RUNS with $NW workers in $(awk "BEGIN {printf \"%.1f\", $end - $start}") s"
jq -r '.coordinator | "Ready->Assign (coordinator, all): p50 \(.ready_to_assign.p50_ms) ms, p99 \(.ready_to_assign.p99_ms) ms, max \(.ready_to_assign.max_ms) ms, n=\(.ready_to_assign.n); results \(.results), acks \(.acks)"' "$T/status.json"
jq -r '.coordinator.ready_to_assign_immediate | "Ready->Assign (coordinator, answered at once): p50 \(.p50_ms) ms, p99 \(.p99_ms) ms, max \(.max_ms) ms, n=\(.n)"' "$T/status.json"
echo "coordinator VmRSS after $RUNS runs: $(rss) kB"
