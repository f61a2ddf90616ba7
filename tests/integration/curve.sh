#!/usr/bin/env bash
# Integration (7): CurveZMQ. The coordinator refuses to start without keys or with an empty
# allow-list (fail closed); a worker whose key is not authorised gets nowhere (ZAP denies it);
# an authorised worker joins and completes a sweep.
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
echo PASS
