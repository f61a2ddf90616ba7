#!/usr/bin/env bash
# Integration: `splatsweep watch` follows a running sequential gate. Under a pseudo-terminal
# (util-linux `script`) it redraws a screen with a bar per gate and per busy worker (iterations of
# the current run), shows the verdict as it forms and exits at the end with the verdict's code
# (0 adopt, 3 reject, 4 inconclusive); with stdout a file it writes plain lines, no escapes.
. "$(dirname "$0")/lib.sh"
command -v script >/dev/null || fail "this test needs script (util-linux)"
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
start coord "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" --insecure --heartbeat-ms 200
wait_until 15 status_json || fail "coordinator did not answer status"
cat >"$T/gate.yaml" <<YAML
name: it-watch
kind: gate
trainer:
  exec:
    command: ["$FAKE", "train", "--out", "{out}", "{set}", "--progress"]
base: {seed: 7, fake_base: 100, fake_cv: 0.004, fake_sleep_s: 1.5, iterations: 1000}
arms:
  off: {arm: "off"}
  on: {arm: "on", fake_effect: -0.05}
pairs: {n: 3, max: 6, order: alternate, sequential: true}
gate:
  metric: train_s
  direction: lower
  rule: {k: 2.0, floor: 0.01}
  guard: {metric: psnr_db, max_drop: 0.05}
# Default contamination limits; the settle window shortened as in every protocol test (lib.sh).
contamination: {settle_s: 0.5, sample_interval_s: 0.25}
YAML
id=$("$SW" submit "$T/gate.yaml" --coordinator "$CTL") || fail "submit"
# Both watchers start before any worker: they see the sweep from its first pair to its end.
"$SW" watch "$id" --coordinator "$CTL" --interval-ms 300 >"$T/plain.out" 2>"$T/plain.log" &
plain_pid=$!
PIDS+=($plain_pid)
set +e
(exec timeout 170 script -qfec "$SW watch $id --coordinator $CTL --interval-ms 300" "$T/tty.out" \
  </dev/null >/dev/null 2>&1) &
tty_pid=$!
set -e
PIDS+=($tty_pid)
start w1 "$SW" worker --coordinator "$WORK" --insecure --id w1 --work-dir "$T/w1" --heartbeat-ms 200
start w2 "$SW" worker --coordinator "$WORK" --insecure --id w2 --work-dir "$T/w2" --heartbeat-ms 200
set +e
wait $tty_pid
tty_rc=$?
wait $plain_pid
plain_rc=$?
set -e
status_json >"$T/status.json" || fail "status after the sweep"
verdict=$(jq -r --argjson id "$id" '.sweeps[] | select(.id == $id) | .gates[0].verdict' "$T/status.json")
case $verdict in
adopt) want=0 ;; reject) want=3 ;; inconclusive) want=4 ;; *) fail "no verdict in status: $verdict" ;;
esac
echo "verdict $verdict; watch exit: pty $tty_rc, plain $plain_rc (expected $want)"
[ "$tty_rc" = "$want" ] || fail "watch under a pty exited $tty_rc, expected $want: $(tail -c 2000 "$T/tty.out")"
[ "$plain_rc" = "$want" ] || fail "plain watch exited $plain_rc, expected $want: $(cat "$T/plain.out" "$T/plain.log")"
# The terminal screen: redrawn in place, a gate bar, a worker bar with the current run's
# iterations out of its config's 1,000, the forming verdict, and the verdict at the end.
grep -q $'\033\\[[0-9]*A' "$T/tty.out" || fail "no redraw (cursor up) in the pty output"
grep -qE 'gate it-watch +\[[#-]+\] [0-9]+/[0-9]+ pairs' "$T/tty.out" || fail "no gate progress bar"
grep -qE 'worker w[12] +\[#+-*\] iter [1-9][0-9]*/1000' "$T/tty.out" ||
  fail "no worker progress bar with iterations: $(tr -d '\033' <"$T/tty.out" | grep worker | head -5)"
grep -qE '(forming|verdict) (adopt|reject|inconclusive): effect' "$T/tty.out" || fail "no forming verdict on screen"
grep -q "verdict: gate it-watch: $verdict" "$T/tty.out" || fail "no final verdict line under the pty"
# Plain lines: no escape sequences, a line per change, the verdict at the end.
! grep -q $'\033' "$T/plain.out" || fail "escape sequences in plain output"
grep -qE '^gate it-watch: pairs [0-9]+/[0-9]+, looks [0-9]+' "$T/plain.out" || fail "no plain gate line"
grep -qE '^worker w[12]: run [0-9]+ \((off|on)\) iter' "$T/plain.out" || fail "no plain worker line"
grep -q "^verdict: gate it-watch: $verdict" "$T/plain.out" || fail "no plain verdict line"
cat "$T/plain.out"
# Bad usage: exit 2.
set +e
"$SW" watch nonsense --coordinator "$CTL" >/dev/null 2>&1
rc=$?
set -e
[ $rc = 2 ] || fail "watch nonsense: exit $rc, expected 2"
echo PASS
