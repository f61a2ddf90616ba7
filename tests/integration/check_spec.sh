#!/usr/bin/env bash
# Integration (4): `splatsweep check` on a spec with an unknown key, a wrong type or bad YAML
# exits 2 and prints FILE:LINE:COLUMN; `submit` of such a spec exits 2 and nothing reaches the
# store of a running coordinator. With the pipeline built, the same holds for a builtin-trainer
# spec whose arm carries a key or value the trainer refuses.
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
# LAB-PRACTICE rule 7, configs validated before the series starts: with the pipeline in the
# build, a builtin-trainer spec whose arm the trainer would refuse (a misspelt key, a value out
# of its set) is refused by check / submit / local, naming the arm and the key.
if grep -q '^SW_BUILD_PIPELINE:BOOL=ON' "$BIN/../CMakeCache.txt" 2>/dev/null; then
  cat >"$T/keys-good.yaml" <<'YAML'
name: it-keys
kind: gate
trainer:
  builtin: {}
scene:
  generate: {kind: bricks, train_views: 4, test_views: 2, resolution: 32, seed: 1}
base: {iterations: 10, seed: 42}
arms:
  off: {radix_scatter: serial}
  on: {radix_scatter: ballot}
pairs: {n: 3}
YAML
  "$SW" check "$T/keys-good.yaml" >"$T/keys-good.out" 2>&1 || fail "good builtin spec refused: $(cat "$T/keys-good.out")"
  sed 's/on: {radix_scatter: ballot}/on: {radix_scater: ballot}/' "$T/keys-good.yaml" >"$T/keys.yaml"
  sed 's/on: {radix_scatter: ballot}/on: {radix_scatter: balot}/' "$T/keys-good.yaml" >"$T/keys-value.yaml"
  for f in keys keys-value; do
    set +e
    "$SW" check "$T/$f.yaml" >"$T/$f.out" 2>&1
    rc=$?
    mkdir -p "$T/db-$f"
    "$SW" local "$T/$f.yaml" --workers 1 --db "$T/db-$f/sw.db" >"$T/local-$f.out" 2>&1
    lrc=$?
    set -e
    cat "$T/$f.out"
    [ $rc -eq 2 ] || fail "$f: check exit $rc, expected 2"
    [ $lrc -eq 2 ] || fail "$f: local exit $lrc, expected 2"
    grep -q "arm 'on'.*radix_scat" "$T/$f.out" || fail "$f: the message names no arm and key"
    grep -q '^ok:' "$T/$f.out" && fail "$f: check said ok"
    [ ! -e "$T/db-$f/sw.db" ] || fail "$f: a refused spec created a database"
  done
  BAD_SPECS="unknown type yaml keys"
else
  echo "pipeline not in this build: trainer keys are not checked"
  BAD_SPECS="unknown type yaml"
fi
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
start coord "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" --insecure
wait_until 15 status_json || fail "coordinator did not answer status"
for f in $BAD_SPECS; do
  set +e
  "$SW" submit "$T/$f.yaml" --coordinator "$CTL" >"$T/submit-$f.out" 2>&1
  rc=$?
  set -e
  [ $rc -eq 2 ] || fail "submit $f: exit $rc, expected 2"
  if [ "$f" = keys ]; then
    grep -q "radix_scater" "$T/submit-$f.out" || fail "submit $f: the key is not named"
  else
    grep -qE "$f\.yaml:[0-9]+:[0-9]+" "$T/submit-$f.out" || fail "submit $f: no position"
  fi
done
status_json >"$T/status.json"
jq -e '.sweeps | length == 0' "$T/status.json" >/dev/null || fail "a bad spec reached the store"
echo PASS
