#!/usr/bin/env bash
# Integration (fault table, issue 11): SIGKILL of the coordinator at random points while results
# arrive, TRIALS times (default 30; SW_SOAK_TRIALS=300 for a soak), each followed by a restart
# on the same database. Three workers run short fake runs, so most kills land while results
# are being received and committed. At the end: PRAGMA integrity_check is ok, every result a
# worker saw acknowledged is in the store, every sweep finished with exactly its n pairs (a
# flagged run's replacement accepted only with load evidence: expect_pairs), no pair mixes
# workers or attempts, no run failed, and every worker's spool is empty.
# The lease ttl is shortened to 20 s (from 60 s) and heartbeats to 200 ms so that the restarts
# and reconnects of 30 trials fit in CI's time; the contamination limits are the defaults.
. "$(dirname "$0")/lib.sh"
TRIALS=${SW_SOAK_TRIALS:-30}
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
n_coord=0
coord() {
  n_coord=$((n_coord + 1))
  start "coord$n_coord" "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" \
    --insecure --heartbeat-ms 200 --liveness 3 --lease-ttl-ms 20000
  eval "CPID=\$PID_coord$n_coord"
}
coord
wait_until 15 status_json || fail "coordinator did not answer status"
for w in w1 w2 w3; do
  SW_LOG=debug start "$w" "$SW" worker --coordinator "$WORK" --insecure --id "$w" --work-dir "$T/$w" \
    --heartbeat-ms 200
done
sweeps=()
submit_one() {
  local k=${#sweeps[@]}
  gate_spec "$T/gate$k.yaml" "it-coord-kill-$k" 8 0.3
  local id
  id=$("$SW" submit "$T/gate$k.yaml" --coordinator "$CTL") || fail "submit $k failed"
  sweeps+=("$id")
}
submit_one
running_count() {
  status_json >"$T/status.json" 2>/dev/null || { echo -1; return; }
  jq '[.sweeps[] | select(.status == "running")] | length' "$T/status.json"
}
acked_before=0
for trial in $(seq 1 "$TRIALS"); do
  # A random point 1-4 s after the coordinator answers again: long enough for the workers to
  # reconnect (their first retry comes after about 1 s) and results to flow, short enough that
  # most kills come while some result is arriving or being committed.
  wait_until 20 status_json || fail "trial $trial: the restarted coordinator did not answer"
  [ "$(running_count)" -eq 0 ] && submit_one
  sleep "$(awk -v r=$RANDOM 'BEGIN { printf "%.2f", 1.0 + 3.0 * r / 32767 }')"
  kill -KILL "$CPID"
  wait "$CPID" 2>/dev/null || true
  coord
done
acked=$(cat "$T"/w?.log | grep -c " acknowledged$" || true)
echo "$TRIALS coordinator SIGKILLs; ${#sweeps[@]} sweeps; $acked acknowledgements before the end"
done_() { [ "$(running_count)" -eq 0 ]; }
wait_until 200 done_ || fail "the sweeps did not finish after $TRIALS kills: $(jq -c '[.sweeps[] | {id, status, pairs}]' "$T/status.json")"
for w in w1 w2 w3; do
  empty() { ! ls "$T/$w/spool/"*.msg >/dev/null 2>&1; }
  wait_until 20 empty || fail "$w's spool still holds $(ls "$T/$w/spool/" | wc -l) result(s)"
done
kill -TERM "$CPID"
wait "$CPID" 2>/dev/null || true
ic=$(sqlite3 "$T/sw.db" "PRAGMA integrity_check")
[ "$ic" = ok ] || fail "integrity_check: $ic"
# Every acknowledged (run, attempt) is stored.
cat "$T"/w?.log | sed -n 's/.* run \([0-9]*\) attempt \([0-9]*\) acknowledged$/\1 \2/p' | sort -u >"$T/acked.txt"
sqlite3 -separator ' ' "$T/sw.db" "SELECT run_id, attempt FROM attempts" | sort -u >"$T/stored.txt"
missing=$(comm -23 "$T/acked.txt" "$T/stored.txt" | wc -l)
[ "$missing" -eq 0 ] || fail "$missing acknowledged result(s) missing from the store: $(comm -23 "$T/acked.txt" "$T/stored.txt" | head -5 | tr '\n' ';')"
for id in "${sweeps[@]}"; do
  sqlite3 "$T/sw.db" "SELECT status FROM sweeps WHERE id = $id" | grep -qx done || fail "sweep $id did not end done"
done
expect_pairs "$T/sw.db" $((8 * ${#sweeps[@]}))
mixed=$(sqlite3 "$T/sw.db" "SELECT COUNT(*) FROM pairs p WHERE p.status = 'done' AND
  (SELECT COUNT(DISTINCT a.worker_id) FROM attempts a JOIN runs r ON r.id = a.run_id
    WHERE r.pair_id = p.id AND a.attempt = p.attempt AND a.status = 'ok') > 1")
[ "$mixed" -eq 0 ] || fail "$mixed pair(s) mix workers"
failed=$(sqlite3 "$T/sw.db" "SELECT COUNT(*) FROM pairs WHERE status = 'failed'")
[ "$failed" -eq 0 ] || fail "$failed pair(s) failed"
churn=$(sqlite3 "$T/sw.db" "SELECT COUNT(*) FROM pairs WHERE attempt > 1")
echo "$(wc -l <"$T/acked.txt") acknowledged results, all stored; integrity ok; 0 pairs failed; $churn pair(s) re-run after a lease expired"
echo PASS
