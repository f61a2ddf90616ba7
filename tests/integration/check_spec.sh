#!/usr/bin/env bash
# Integration (4): `splatsweep check` on a spec with an unknown key, a wrong type or bad YAML
# exits 2 and prints FILE:LINE:COLUMN; `submit` of such a spec exits 2 and nothing reaches the
# store of a running coordinator.
. "$(dirname "$0")/lib.sh"
gate_spec "$T/good.yaml" it-check 3 0
"$SW" check "$T/good.yaml" >"$T/check.log" 2>&1 || fail "good spec refused: $(cat "$T/check.log")"
sed 's/^kind: gate$/kind: gate\nsurprise: 1/' "$T/good.yaml" >"$T/unknown.yaml"
sed 's/^pairs: {n: 3,/pairs: {n: three,/' "$T/good.yaml" >"$T/type.yaml"
sed 's/^arms:$/arms: [unclosed/' "$T/good.yaml" >"$T/yaml.yaml"
for f in unknown type yaml; do
  set +e
  "$SW" check "$T/$f.yaml" >"$T/$f.out" 2>&1
  rc=$?
  set -e
  cat "$T/$f.out"
  [ $rc -eq 2 ] || fail "$f: exit $rc, expected 2"
  grep -qE "$f\.yaml:[0-9]+:[0-9]+" "$T/$f.out" || fail "$f: no FILE:LINE:COLUMN in the message"
done
grep -q 'unknown.yaml:3:1:' "$T/unknown.out" || fail "unknown key not reported at 3:1"
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
start coord "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" --insecure
wait_until 15 status_json || fail "coordinator did not answer status"
for f in unknown type yaml; do
  set +e
  "$SW" submit "$T/$f.yaml" --coordinator "$CTL" >"$T/submit-$f.out" 2>&1
  rc=$?
  set -e
  [ $rc -eq 2 ] || fail "submit $f: exit $rc, expected 2"
  grep -qE "$f\.yaml:[0-9]+:[0-9]+" "$T/submit-$f.out" || fail "submit $f: no position"
done
status_json >"$T/status.json"
jq -e '.sweeps | length == 0' "$T/status.json" >/dev/null || fail "a bad spec reached the store"
echo PASS
