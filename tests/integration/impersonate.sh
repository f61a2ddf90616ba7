#!/usr/bin/env bash
# Integration: nobody takes over a live worker's session or lease by presenting its id.
# Insecure: a peer with routing id "dup" sends a RunFinished for dup's lease without Hello (no
# Ack), and a second real `worker --id dup` is refused while the first is live; the first keeps
# its session and its results are stored under dup. CURVE: a second allowed key presenting
# --id dup is refused (counted in status JSON as refused_identity), also after the victim went
# silent (the id stays bound to its first key), and the victim's runs are stored.
. "$(dirname "$0")/lib.sh"

# dup_leased STATUS_FN: the single session is dup, holding a lease with a run in progress.
dup_leased() {
  "$1" >"$T/status.json" || return 1
  jq -e '[.coordinator.sessions[] | select(.id == "dup" and .lease > 0 and .run > 0)] | length == 1' \
    "$T/status.json"
}
finished() {
  "$1" >"$T/status.json" || return 1
  jq -e '[.sweeps[] | select(.status == "running")] | length == 0' "$T/status.json"
}
# check_stored REPORT: the pairs (a contaminated one is replaced by another) and every run of
# them are stored under worker dup.
check_stored() {
  jq -e '(.sweeps[0].gates[0].pairs | length) >= 1 and
         ([.sweeps[0].gates[0].pairs[] | .worker, .off.worker, .on.worker] | unique) == ["dup"]' \
    "$1" >/dev/null ||
    fail "the victim's runs are not stored under dup: $(jq -c '.sweeps[0].gates[0].pairs' "$1")"
}

# ---- insecure ----
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
start coord "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/insecure.db" --insecure --heartbeat-ms 200
wait_until 15 status_json || fail "coordinator did not answer status"
start victim "$SW" worker --coordinator "$WORK" --insecure --id dup --work-dir "$T/victim" --heartbeat-ms 200
gate_spec "$T/gate.yaml" it-impersonate 1 4
id=$("$SW" submit "$T/gate.yaml" --coordinator "$CTL") || fail "submit"
wait_until 30 dup_leased status_json || fail "dup never held a lease: $(cat "$T/status.json")"
lease=$(jq -r '.coordinator.sessions[0].lease' "$T/status.json")
run=$(jq -r '.coordinator.sessions[0].run' "$T/status.json")
session=$(jq -r '.coordinator.sessions[0].session' "$T/status.json")
# (a) RunFinished for the victim's lease from routing id "dup" without Hello.
"$BIN/frame_poke" "$WORK" impersonate dup "$lease" "$run" >"$T/poke.out" 2>&1 ||
  fail "the impersonated RunFinished was acknowledged: $(cat "$T/poke.out")"
grep -q "answer: Reject: no session" "$T/poke.out" || fail "no Reject for the impersonator: $(cat "$T/poke.out")"
echo "insecure, RunFinished without Hello: $(tr '\n' ' ' <"$T/poke.out")"
# (b) a second real worker with the same id while the first is live.
start thief "$SW" worker --coordinator "$WORK" --insecure --id dup --work-dir "$T/thief" --heartbeat-ms 200
refused() {
  "$1" >"$T/status.json" || return 1
  jq -e '.coordinator.refused_identity >= 1' "$T/status.json"
}
wait_until 15 refused status_json || fail "the second dup was not refused: $(jq -c .coordinator "$T/status.json")"
jq -e --arg s "$session" '[.coordinator.sessions[] | .session] == [$s]' "$T/status.json" >/dev/null ||
  fail "the victim's session was taken over: $(jq -c .coordinator.sessions "$T/status.json")"
grep -q "worker id already in use by a live session" "$T/thief.log" || fail "the thief was not told why"
wait_until 90 finished status_json || fail "sweep did not finish"
jq -e --arg s "$session" '[.coordinator.sessions[] | .session] == [$s]' "$T/status.json" >/dev/null ||
  fail "the victim's session changed: $(jq -c .coordinator.sessions "$T/status.json")"
"$SW" report "$id" --coordinator "$CTL" --format json >"$T/report.json" || fail "report"
check_stored "$T/report.json"
[ -z "$(ls -A "$T/thief/runs" 2>/dev/null)" ] || fail "the thief ran something"
echo "insecure: second dup refused $(jq -r .coordinator.refused_identity "$T/status.json") time(s), victim kept session $session"
kill -TERM "$PID_thief" "$PID_victim" "$PID_coord"
wait "$PID_thief" "$PID_victim" "$PID_coord" 2>/dev/null || true

# ---- CURVE ----
WORK="tcp://127.0.0.1:$((PORT + 2))"
CTL="tcp://127.0.0.1:$((PORT + 3))"
for k in coord victim other; do "$SW" keygen "$T/$k" >/dev/null || fail "keygen $k"; done
mkdir -p "$T/coord/authorized"
for k in victim other; do
  cp "$T/coord/public.key" "$T/$k/coordinator.pub"
  cp "$T/$k/public.key" "$T/coord/authorized/$k.pub"
done
start ccoord "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/curve.db" --keys "$T/coord" --heartbeat-ms 200
sstatus() { "$SW" status --coordinator "$CTL" --format json --keys "$T/victim" --timeout-ms 3000; }
wait_until 15 sstatus || fail "CURVE coordinator did not answer status"
start cvictim "$SW" worker --coordinator "$WORK" --keys "$T/victim" --id dup --work-dir "$T/cvictim" --heartbeat-ms 200
id=$("$SW" submit "$T/gate.yaml" --coordinator "$CTL" --keys "$T/victim") || fail "submit over CURVE"
wait_until 30 dup_leased sstatus || fail "dup never held a lease over CURVE: $(cat "$T/status.json")"
lease=$(jq -r '.coordinator.sessions[0].lease' "$T/status.json")
run=$(jq -r '.coordinator.sessions[0].run' "$T/status.json")
session=$(jq -r '.coordinator.sessions[0].session' "$T/status.json")
start cthief "$SW" worker --coordinator "$WORK" --keys "$T/other" --id dup --work-dir "$T/cthief" --heartbeat-ms 200
wait_until 15 refused sstatus || fail "the other key's dup was not refused: $(jq -c .coordinator "$T/status.json")"
grep -q "worker id bound to another key" "$T/cthief.log" || fail "the other key was not told why"
grep -q "bound to key 'victim.pub'" "$T/ccoord.log" || fail "the coordinator did not log the binding"
"$BIN/frame_poke" "$WORK" impersonate dup "$lease" "$run" "$T/other" >"$T/cpoke.out" 2>&1 ||
  fail "the impersonated RunFinished was acknowledged over CURVE: $(cat "$T/cpoke.out")"
echo "CURVE, RunFinished without Hello from another key: $(tr '\n' ' ' <"$T/cpoke.out")"
wait_until 90 finished sstatus || fail "sweep did not finish over CURVE"
jq -e --arg s "$session" '[.coordinator.sessions[] | .session] == [$s]' "$T/status.json" >/dev/null ||
  fail "the victim's CURVE session changed: $(jq -c .coordinator.sessions "$T/status.json")"
"$SW" report "$id" --coordinator "$CTL" --format json --keys "$T/victim" >"$T/creport.json" || fail "report over CURVE"
check_stored "$T/creport.json"
[ -z "$(ls -A "$T/cthief/runs" 2>/dev/null)" ] || fail "the other key's worker ran something"
# The victim goes silent past liveness: its id stays bound to its key, the other key still gets
# nothing.
before=$(jq -r .coordinator.refused_identity "$T/status.json")
kill -KILL "$PID_cvictim"
sleep 3
more_refused() {
  sstatus >"$T/status.json" || return 1
  jq -e --argjson b "$before" '.coordinator.refused_identity > $b and
                               (.coordinator.sessions | length) == 0' "$T/status.json"
}
wait_until 15 more_refused || fail "the other key took the silent victim's id: $(jq -c .coordinator "$T/status.json")"
echo "CURVE: other key refused $(jq -r .coordinator.refused_identity "$T/status.json") time(s), also after the victim went silent"
echo PASS
