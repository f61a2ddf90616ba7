#!/usr/bin/env bash
# Integration (fault table, issue 11): network partitions between a worker and the coordinator,
# made with nftables in a network namespace this test creates (unshare -n: its own loopback,
# nothing outside it touched). The rule drops every packet to or from the worker endpoint's
# port; the control endpoint stays reachable, so status can watch.
# A. Shorter than the liveness window (1.5 s of a 3 s window) in the middle of a run: nobody
#    notices: one session throughout, nothing declared offline, every pair done in attempt 1.
# B. Longer than the lease (12 s of an 8 s lease) from the start of a pair's first run: the
#    coordinator expires the lease and re-queues the pair; the cut-off worker finishes both runs
#    meanwhile (2 s each) and keeps their results; after the heal it reconnects and resends them,
#    and since nobody took the pair in between the lease is revived and both results count:
#    the pair is done in attempt 1, nothing refused, no run repeated. Exactly n pairs, none
#    failed or mixed, every acknowledged result stored.
# Heartbeats of 500 ms, liveness 6 and a lease ttl of 8 s (defaults 1 s, 5, 60 s) so that both
# partitions take seconds; the contamination limits are the defaults.
if [ -z "${SW_IN_NETNS:-}" ]; then
  if [ "$(id -u)" -ne 0 ] || ! unshare -n true 2>/dev/null || ! command -v nft >/dev/null; then
    echo "SKIP: needs root, unshare -n and nft (Debian nftables) to make a network namespace"
    exit 77
  fi
  exec unshare -n env SW_IN_NETNS=1 bash "$0" "$@"
fi
ip link set lo up
. "$(dirname "$0")/lib.sh"
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
part_on() {
  nft add table inet swpart
  nft add chain inet swpart input '{ type filter hook input priority 0; }'
  nft add rule inet swpart input tcp dport "$PORT" drop
  nft add rule inet swpart input tcp sport "$PORT" drop
}
part_off() { nft delete table inet swpart; }
start coord "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" --insecure \
  --heartbeat-ms 500 --liveness 6 --lease-ttl-ms 8000
wait_until 15 status_json || fail "coordinator did not answer status"
SW_LOG=debug start w1 "$SW" worker --coordinator "$WORK" --insecure --id w1 --work-dir "$T/w1" \
  --heartbeat-ms 500
running() {
  status_json >"$T/status.json" || return 1
  jq -e '[.coordinator.sessions[] | select(.lease > 0 and .run > 0)] | length == 1' "$T/status.json"
}
sweep_done() {
  status_json >"$T/status.json" || return 1
  jq -e --argjson id "$1" '[.sweeps[] | select(.id == $id and .status == "done")] | length == 1' "$T/status.json"
}

# A. 1.5 s partition inside a 3 s liveness window.
gate_spec "$T/a.yaml" it-part-short 2 2
a=$("$SW" submit "$T/a.yaml" --coordinator "$CTL") || fail "submit A"
wait_until 30 running || fail "A: no run started"
part_on
sleep 1.5
part_off
echo "A: 1.5 s partition during a run, healed"
wait_until 60 sweep_done "$a" || fail "A: the sweep did not finish"
sessions=$(grep -c "\] session w1" "$T/w1.log")
[ "$sessions" -eq 1 ] || fail "A: the worker needed $sessions sessions for a partition inside the liveness window"
! grep -q "offline" "$T/coord.log" || fail "A: $(grep offline "$T/coord.log" | head -1)"
late=$(sqlite3 "$T/sw.db" "SELECT COUNT(*) FROM pairs WHERE sweep_id = $a AND attempt > 1")
[ "$late" -eq 0 ] || fail "A: $late pair(s) needed another attempt"

# B. 12 s partition past an 8 s lease.
gate_spec "$T/b.yaml" it-part-long 2 2
b=$("$SW" submit "$T/b.yaml" --coordinator "$CTL") || fail "submit B"
wait_until 30 running || fail "B: no run started"
lease=$(jq -r '.coordinator.sessions[0].lease' "$T/status.json")
part_on
sleep 12
part_off
echo "B: 12 s partition during lease $lease, healed"
wait_until 90 sweep_done "$b" || fail "B: the sweep did not finish after the heal"
expired=$(sqlite3 "$T/sw.db" "SELECT COUNT(*) FROM events WHERE kind = 'expire' AND text LIKE 'lease $lease %'")
[ "$expired" -eq 1 ] || fail "B: lease $lease did not expire during a partition longer than the lease"
revived=$(sqlite3 "$T/sw.db" "SELECT COUNT(*) FROM events WHERE kind = 'revive' AND text LIKE 'lease $lease %'")
[ "$revived" -eq 1 ] || fail "B: lease $lease was not revived by its late results: $(grep -E 'stale|revive' "$T/coord.log" | head -3)"
first=$(sqlite3 "$T/sw.db" "SELECT p.attempt FROM leases l JOIN pairs p ON p.id = l.pair_id WHERE l.id = $lease")
[ "$first" -eq 1 ] || fail "B: the partitioned pair ended in attempt $first"
stale=$(jq '.coordinator.stale' "$T/status.json")
[ "$stale" -eq 0 ] || fail "B: $stale result(s) refused as stale"
sed -n 's/.* run \([0-9]*\) attempt \([0-9]*\) acknowledged$/\1 \2/p' "$T/w1.log" | sort -u >"$T/acked.txt"
sqlite3 -separator ' ' "$T/sw.db" "SELECT run_id, attempt FROM attempts" | sort -u >"$T/stored.txt"
missing=$(comm -23 "$T/acked.txt" "$T/stored.txt" | wc -l)
[ "$missing" -eq 0 ] || fail "$missing acknowledged result(s) missing from the store"
expect_pairs "$T/sw.db" 4
failed=$(sqlite3 "$T/sw.db" "SELECT COUNT(*) FROM pairs WHERE status = 'failed'")
[ "$failed" -eq 0 ] || fail "$failed pair(s) failed"
mixed=$(sqlite3 "$T/sw.db" "SELECT COUNT(*) FROM pairs p WHERE p.status = 'done' AND
  (SELECT COUNT(*) FROM attempts a JOIN runs r ON r.id = a.run_id
    WHERE r.pair_id = p.id AND a.attempt = p.attempt AND a.status = 'ok') <> 2")
[ "$mixed" -eq 0 ] || fail "$mixed done pair(s) without exactly two ok runs of their attempt"
echo "$(wc -l <"$T/acked.txt") acknowledged results, all stored; 0 pairs failed; lease $lease expired and revived, 0 stale"
echo PASS
