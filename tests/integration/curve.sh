#!/usr/bin/env bash
# Integration (7): CurveZMQ. The coordinator refuses to start without keys or with an empty
# allow-list (fail closed); a worker whose key is not authorised gets nowhere (ZAP denies it);
# an authorised worker joins and completes a sweep. Without submitters/ the worker key may also
# submit (and the coordinator warns so). Roles: once submitters/ exists a worker key is refused
# on the control endpoint (status and submit fail, counted in zap_denied), a viewer key reads
# status but its submit is refused, and a submitter key submits a sweep the worker runs.
. "$(dirname "$0")/lib.sh"
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
"$SW" keygen "$T/coord" >/dev/null || fail "keygen coord"
"$SW" keygen "$T/good" >/dev/null || fail "keygen good"
"$SW" keygen "$T/bad" >/dev/null || fail "keygen bad"
[ "$(stat -c %a "$T/coord/secret.key")" = 600 ] || fail "secret key is not private"
cp "$T/coord/public.key" "$T/good/coordinator.pub"
cp "$T/coord/public.key" "$T/bad/coordinator.pub"
set +e
"$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" >"$T/nokeys.log" 2>&1
rc1=$?
"$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" --keys "$T/coord" >"$T/noallow.log" 2>&1
rc2=$?
set -e
[ $rc1 -ne 0 ] || fail "started without keys or --insecure"
[ $rc2 -ne 0 ] || fail "started with no allow-list"
mkdir -p "$T/coord/authorized"
cp "$T/good/public.key" "$T/coord/authorized/good.pub"
start coord "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" --keys "$T/coord" --heartbeat-ms 200
sstatus() { "$SW" status --coordinator "$CTL" --format json --keys "$T/good" --timeout-ms 3000; }
wait_until 15 sstatus || fail "coordinator did not answer an authorised client"
set +e
"$SW" status --coordinator "$CTL" --format json --keys "$T/bad" --timeout-ms 1500 >"$T/badstatus.out" 2>&1
rc=$?
set -e
[ $rc -ne 0 ] || fail "an unauthorised client got a status answer"
start wbad "$SW" worker --coordinator "$WORK" --keys "$T/bad" --id wbad --work-dir "$T/wbad" --heartbeat-ms 200
sleep 2
sstatus >"$T/status.json"
jq -e '(.coordinator.sessions | length) == 0 and .coordinator.zap_denied >= 1' "$T/status.json" >/dev/null ||
  fail "the unauthorised worker got in: $(jq -c .coordinator "$T/status.json")"
start wgood "$SW" worker --coordinator "$WORK" --keys "$T/good" --id wgood --work-dir "$T/wgood" --heartbeat-ms 200
joined() { sstatus >"$T/status.json" && jq -e '[.coordinator.sessions[].id] == ["wgood"]' "$T/status.json"; }
wait_until 15 joined || fail "the authorised worker did not join"
gate_spec "$T/gate.yaml" it-curve 1 0.1
id=$("$SW" submit "$T/gate.yaml" --coordinator "$CTL" --keys "$T/good") || fail "submit"
done_() { sstatus >"$T/status.json" && jq -e '[.sweeps[] | select(.status == "running")] | length == 0' "$T/status.json"; }
wait_until 60 done_ || fail "sweep did not finish over CURVE"
jq -e '.coordinator.zap_denied >= 1 and ([.coordinator.sessions[].id] == ["wgood"])' "$T/status.json" >/dev/null || fail "state after the sweep"
grep -q "submitters does not exist" "$T/coord.log" || fail "no warning that worker keys can control"

# Roles: restart with submitters/ and viewers/; the worker (key in authorized/ only) reconnects.
kill -TERM "$PID_coord"
wait "$PID_coord" 2>/dev/null || true
for k in sub view; do
  "$SW" keygen "$T/$k" >/dev/null || fail "keygen $k"
  cp "$T/coord/public.key" "$T/$k/coordinator.pub"
done
mkdir -p "$T/coord/submitters" "$T/coord/viewers"
cp "$T/sub/public.key" "$T/coord/submitters/alice.pub"
cp "$T/view/public.key" "$T/coord/viewers/bob.pub"
start coord2 "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" --keys "$T/coord" --heartbeat-ms 200
kstatus() { "$SW" status --coordinator "$CTL" --format json --keys "$1" --timeout-ms "${2:-3000}"; }
wait_until 15 kstatus "$T/sub" || fail "coordinator did not answer a submitter key"
! grep -q "submitters does not exist" "$T/coord2.log" || fail "warned although submitters/ exists"
denied() { kstatus "$T/sub" | jq -e .coordinator.zap_denied; }
d0=$(denied) || fail "status with the submitter key"
set +e
kstatus "$T/good" 1500 >"$T/workerstatus.out" 2>&1
rc1=$?
"$SW" submit "$T/gate.yaml" --coordinator "$CTL" --keys "$T/good" --timeout-ms 1500 >"$T/workersubmit.out" 2>&1
rc2=$?
set -e
[ $rc1 -ne 0 ] || fail "a worker key read status on the control endpoint"
[ $rc2 -ne 0 ] || fail "a worker key submitted a sweep"
d1=$(denied) || fail "status with the submitter key"
[ "$d1" -ge $((d0 + 2)) ] || fail "worker key refusals not counted: zap_denied $d0 -> $d1"
grep -q "denied key .* on endpoint \"control\"" "$T/coord2.log" || fail "refusal not logged with key and endpoint"
kstatus "$T/view" >/dev/null || fail "a viewer key could not read status"
set +e
"$SW" submit "$T/gate.yaml" --coordinator "$CTL" --keys "$T/view" >"$T/viewsubmit.out" 2>&1
rc=$?
set -e
[ $rc -ne 0 ] || fail "a viewer key submitted a sweep"
grep -q "viewer keys may not submit/cancel" "$T/viewsubmit.out" || fail "viewer submit: $(cat "$T/viewsubmit.out")"
d2=$(denied) || fail "status with the submitter key"
[ "$d2" -ge $((d1 + 1)) ] || fail "viewer refusal not counted: zap_denied $d1 -> $d2"
[ "$(kstatus "$T/sub" | jq '[.sweeps[] | select(.status == "running")] | length')" = 0 ] || fail "a refused submit created a sweep"
rejoined() { kstatus "$T/sub" | jq -e '[.coordinator.sessions[].id] == ["wgood"]'; }
wait_until 15 rejoined || fail "the worker did not rejoin with submitters/ in place"
gate_spec "$T/gate2.yaml" it-curve-roles 1 0.1
"$SW" submit "$T/gate2.yaml" --coordinator "$CTL" --keys "$T/sub" >/dev/null || fail "submit with the submitter key"
done2() { kstatus "$T/sub" | jq -e '[.sweeps[] | select(.status == "running")] | length == 0'; }
wait_until 60 done2 || fail "the submitter's sweep did not finish"
echo PASS
