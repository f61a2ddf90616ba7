# lib.sh: shared helpers of the daemon integration tests (sourced, not run).
#
# Every test gets its own scratch directory and its own loopback ports, starts the real
# executables, and kills exactly the processes it started (by pid, and the trainers whose command
# line names its scratch directory) when it ends, also on failure.
# Arguments of every test: BIN_DIR (splatsweep, fake_trainer, frame_poke) and BASE_PORT.
set -euo pipefail
BIN=${1:?bin dir}
PORT=${2:?base port}
# A test uses the ten ports from PORT. When another program (another checkout's test run, a
# daemon) already listens on one of them, move the whole block up by a multiple of 1000 so a
# collision cannot fail the test for a reason that has nothing to do with it.
port_block_free() {
  local p
  for p in $(seq "$1" $(($1 + 9))); do
    (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null && return 1
  done
  return 0
}
for shift_by in 0 1000 2000 3000 4000 5000 6000 7000; do
  if port_block_free $((PORT + shift_by)); then
    PORT=$((PORT + shift_by))
    break
  fi
done
SW="$BIN/splatsweep"
FAKE="$BIN/fake_trainer"
command -v jq >/dev/null || { echo "FAIL: these tests need jq (apt-get install jq)" >&2; exit 1; }
T=$(mktemp -d "/tmp/sw-it-$(basename "$0" .sh)-XXXXXX")
# The usual home of a test's database ($T/db/sw.db): a --db in a folder that does not exist is
# refused (the default results/ is the only folder splatsweep makes).
mkdir -p "$T/db"
PIDS=()
export SW_LOG=${SW_LOG:-info}
# The host measurement lock of this test's workers: they take it in turn as on any host, and the
# test does not wait for a real worker or another checkout's tests measuring on this machine.
export SW_HOST_LOCK="$T/host.lock"


# The trainers a killed worker leaves behind: found by their command line naming $T.
scratch_pids() {
  local f
  for f in $(grep -lF -- "$T/" /proc/[0-9]*/cmdline 2>/dev/null); do
    f=${f#/proc/}
    echo "${f%/cmdline}"
  done
}

cleanup() {
  local rc=$?
  set +e
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    local alive=0
    for p in "${PIDS[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    sleep 0.3
  done
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done
  for p in $(scratch_pids); do [ "$p" != "$$" ] && kill -KILL "$p" 2>/dev/null; done
  # Under the sanitizer configuration (-DSW_SANITIZE=ON) a report in any daemon's log fails the
  # test, even when the daemon's exit status was never looked at.
  if grep -lE "ERROR: (Address|Leak|Undefined)Sanitizer|runtime error:" "$T"/*.log >/dev/null 2>&1; then
    echo "FAIL: sanitizer report in $(grep -lE "Sanitizer|runtime error:" "$T"/*.log | tr '\n' ' ')" >&2
    [ $rc -eq 0 ] && rc=1
  fi
  if [ $rc -ne 0 ]; then
    echo "---- logs of the failed test ($T) ----" >&2
    for f in "$T"/*.log; do [ -f "$f" ] && { echo "== $f" >&2; tail -n 40 "$f" >&2; }; done
  fi
  [ -n "${SW_IT_KEEP:-}" ] || rm -rf "$T"
  exit $rc
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# wait_until SECONDS COMMAND...: polls COMMAND every 0.2 s until it succeeds or time runs out.
wait_until() {
  local secs=$1
  shift
  local end=$(($(date +%s) + secs))
  # Once a second: each poll starts `splatsweep status` and jq, and at five polls a second the
  # harness itself used about 0.2 cores, a foreign load the workers' samplers rightly flagged.
  until "$@" >/dev/null 2>&1; do
    [ "$(date +%s)" -ge $end ] && return 1
    sleep 1
  done
}

# gate_spec FILE NAME PAIRS SLEEP_S [EXTRA_BASE_YAML]: a gate over the fake trainer whose on arm
# is 5% faster, judged with the default contamination limits.
gate_spec() {
  local file=$1 name=$2 pairs=$3 sleep_s=$4 extra=${5:-}
  cat >"$file" <<YAML
name: $name
kind: gate
trainer:
  exec:
    command: ["$FAKE", "train", "--out", "{out}", "{set}", "--progress"]
base: {seed: 7, fake_base: 100, fake_cv: 0.004, fake_sleep_s: $sleep_s$extra}
arms:
  off: {arm: "off"}
  on: {arm: "on", fake_effect: -0.05}
pairs: {n: $pairs, max: $pairs, order: alternate}
gate:
  metric: train_s
  direction: lower
  rule: {k: 2.0, floor: 0.01}
  guard: {metric: psnr_db, max_drop: 0.05}
# The contamination limits are the defaults. These tests judge the protocol (leases, restarts,
# placement), not load, and run many sub-second fake runs: the settle window is shortened from
# the default 5 s so that each test stays well under a minute. That makes the quiet wait
# easier to pass, never a run easier to keep: every window is still judged by the defaults.
contamination: {settle_s: 0.5, sample_interval_s: 0.25}
YAML
}

# start NAME COMMAND...: runs COMMAND in the background with output in $T/NAME.log.
start() {
  local name=$1
  shift
  "$@" >"$T/$name.log" 2>&1 &
  PIDS+=($!)
  eval "PID_${name//-/_}=$!"
}

# trainer_pids DIR: pids of fake trainers whose command line names DIR (one grep, no pgrep; the
# grep itself is excluded because its argv[0] is not the fake trainer).
trainer_pids() {
  local f arg0
  for f in $(grep -lF -- "$1" /proc/[0-9]*/cmdline 2>/dev/null); do
    IFS= read -r -d '' arg0 <"$f" 2>/dev/null || continue
    if [ "$arg0" = "$FAKE" ]; then
      f=${f#/proc/}
      echo "${f%/cmdline}"
    fi
  done
}

status_json() { "$SW" status --coordinator "$CTL" --format json --timeout-ms 3000; }

# expect_pairs DB N: the store DB holds exactly N regular pairs, every run is ok or flagged, and
# each flagged run is backed by evidence and had its pair replaced exactly once.
# On an idle machine no run is flagged. On the 2-core sandboxes these tests run on, a load from
# outside every process of ours (0.2-0.55 cores, seen in about one clean suite run of five) is
# sometimes there for a few seconds; the default rules then rightly flag the run. The tests judge
# the product with those defaults, so a flag is accepted when it is right: it names cpu_other or
# a foreign GPU process as its evidence, and the scheduler replaced its pair once, as the
# default rules say (contamination.rerun_once).
expect_pairs() {
  local db=$1 n=$2
  qp() { sqlite3 -separator ' ' "$db" "$@"; }
  local flagged bad n_flagged_pairs n_regular n_repl not_ok
  flagged=$(qp "SELECT COUNT(*) FROM attempts WHERE status IN ('contaminated', 'invalid')")
  if [ "$flagged" -ne 0 ]; then
    echo "flagged runs (a load on the host from outside splatsweep):"
    qp "SELECT a.id, a.status, a.flag_reason FROM attempts a WHERE status IN ('contaminated', 'invalid')" | sed 's/^/  /'
    bad=$(qp "SELECT COUNT(*) FROM attempts WHERE status IN ('contaminated', 'invalid') AND
               (flag_reason IS NULL OR (flag_reason NOT LIKE '%cpu_other%' AND flag_reason NOT LIKE '%GPU%'))")
    [ "$bad" -eq 0 ] || fail "$bad flagged run(s) without load evidence"
  fi
  not_ok=$(qp "SELECT COUNT(*) FROM attempts WHERE status NOT IN ('ok', 'contaminated', 'invalid')")
  [ "$not_ok" -eq 0 ] || fail "$not_ok run(s) failed: $(qp "SELECT id, status, error_text FROM attempts WHERE status NOT IN ('ok', 'contaminated', 'invalid')" | tr '\n' ';')"
  n_flagged_pairs=$(qp "SELECT COUNT(DISTINCT p.id) FROM attempts a JOIN runs r ON r.id = a.run_id
                         JOIN pairs p ON p.id = r.pair_id
                        WHERE a.status IN ('contaminated', 'invalid') AND p.is_replacement = 0")
  n_regular=$(qp "SELECT COUNT(*) FROM pairs WHERE is_replacement = 0")
  n_repl=$(qp "SELECT COUNT(*) FROM pairs WHERE is_replacement = 1")
  [ "$n_regular" -eq "$n" ] && [ "$n_repl" -eq "$n_flagged_pairs" ] ||
    fail "expected $n pairs and $n_flagged_pairs replacement(s), found $n_regular regular, $n_repl replacement(s)"
}
