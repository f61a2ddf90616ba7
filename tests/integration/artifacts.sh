#!/usr/bin/env bash
# Integration: the artifact store (issue 14, item 5). Workers upload each run's result.json,
# trainer.log, final.ply and renders once its result is acknowledged; every file is listed at
# /api/artifacts/SWEEP and downloaded through the coordinator's dashboard with the sha256 the
# RunFinished announced. An upload without the run's token is refused (401), one whose body has
# another sha256 is refused (422) and stores nothing, the right body is then stored (201). A
# sweep whose spec says keep_sweeps: 1 loses its files once a newer sweep finished (the rule
# runs at the coordinator's start), the newer sweep keeps its own.
. "$(dirname "$0")/lib.sh"
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
HTTP=$((PORT + 2))
ART=$((PORT + 3))
DB="$T/db/sw.db"
coordinator() {
  start "$1" "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$DB" --insecure \
    --heartbeat-ms 200 --http "$HTTP" --artifacts "$ART" --artifacts-bind 127.0.0.1 "${@:2}"
  wait_until 15 status_json || fail "coordinator did not answer status"
}
coordinator coord
q() { sqlite3 "$DB" "$@"; }
gate_spec "$T/a.yaml" it-art-a 2 0.2 ", fake_ply_kb: 300"
printf 'artifacts: {keep_sweeps: 1}\n' >>"$T/a.yaml"
a=$("$SW" submit "$T/a.yaml" --coordinator "$CTL") || fail "submit a"
start w1 "$SW" worker --coordinator "$WORK" --insecure --id w1 --work-dir "$T/w1" --heartbeat-ms 200
start w2 "$SW" worker --coordinator "$WORK" --insecure --id w2 --work-dir "$T/w2" --heartbeat-ms 200
stored() {
  [ "$(q "SELECT COUNT(*) FROM artifacts WHERE state = 'expected'")" = 0 ] &&
    [ "$(q "SELECT COUNT(*) FROM artifacts WHERE state = 'stored'")" -gt 0 ] &&
    [ "$(q "SELECT status FROM sweeps WHERE id = $a")" != running ]
}
wait_until 120 stored || fail "artifacts not stored: $(q "SELECT state, COUNT(*) FROM artifacts GROUP BY state")"
curl -sf "http://127.0.0.1:$HTTP/api/artifacts/$a" >"$T/list.json" || fail "GET /api/artifacts/$a"
runs=$(q "SELECT COUNT(*) FROM attempts a JOIN runs r ON r.id = a.run_id JOIN pairs p ON p.id = r.pair_id WHERE p.sweep_id = $a AND a.status = 'ok'")
jq -c '[.[] | {run, name, size, state}]' "$T/list.json"
# Every ok run: its four files, stored.
for f in result.json trainer.log final.ply renders/test-000.png; do
  n=$(jq --arg f "$f" '[.[] | select(.name == $f and .state == "stored")] | length' "$T/list.json")
  [ "$n" -ge "$runs" ] || fail "$f stored for $n of $runs runs"
done
# Downloads through the dashboard: the bytes hash to the sha256 the result announced.
jq -r '.[] | select(.state == "stored") | "\(.url) \(.sha256) \(.size)"' "$T/list.json" >"$T/urls"
while read -r url sha size; do
  curl -sf -D "$T/headers" "http://127.0.0.1:$HTTP$url" -o "$T/dl" || fail "GET $url"
  got=$(sha256sum "$T/dl" | cut -d' ' -f1)
  [ "$got" = "$sha" ] || fail "$url: sha256 $got, announced $sha"
  [ "$(stat -c %s "$T/dl")" = "$size" ] || fail "$url: size differs"
  grep -qi "^x-content-sha256: $sha" "$T/headers" || fail "$url: no X-Content-SHA256 header"
done <"$T/urls"
echo "downloaded $(wc -l <"$T/urls") artifacts, every sha256 matches"
# The report lists them too: the same rows in its JSON, a line in the text, a table in HTML.
"$SW" report "$a" --db "$T/db/sw.db" --format json >"$T/report.json" || fail "report"
jq -e --slurpfile l "$T/list.json" '.sweeps[0].artifacts == $l[0]' "$T/report.json" >/dev/null ||
  fail "the report's artifacts differ from /api/artifacts: $(jq -c '.sweeps[0].artifacts | length' "$T/report.json")"
"$SW" report "$a" --db "$T/db/sw.db" >"$T/report.txt" || fail "text report"
grep -q "artifacts: $(wc -l <"$T/urls") stored" "$T/report.txt" || fail "text report: $(grep artifacts "$T/report.txt")"
"$SW" report "$a" --db "$T/db/sw.db" --format html -o "$T/report.html" || fail "html report"
grep -q "<h3>Artifacts</h3>" "$T/report.html" && grep -q "$(head -1 "$T/urls" | cut -d' ' -f2)" "$T/report.html" ||
  fail "the HTML report lists no artifacts"
ply=$(grep final.ply "$T/urls" | head -1 | cut -d' ' -f1)
[ -n "$ply" ] || fail "no final.ply among the downloads"
# Uploads are authenticated and checked: an expected row made by hand (as a RunFinished would),
# a PUT without the token, one with the token and other bytes, then the right bytes.
run=$(q "SELECT a.run_id FROM attempts a JOIN runs r ON r.id = a.run_id JOIN pairs p ON p.id = r.pair_id WHERE p.sweep_id = $a AND a.status = 'ok' LIMIT 1")
att=$(q "SELECT attempt FROM attempts WHERE run_id = $run AND status = 'ok'")
printf 'the right bytes\n' >"$T/good.bin"
printf 'other bytes !!!\n' >"$T/bad.bin"
good_sha=$(sha256sum "$T/good.bin" | cut -d' ' -f1)
q "INSERT INTO artifacts (attempt_id, name, size, sha256) SELECT id, 'renders/extra.png', 16, '$good_sha' FROM attempts WHERE run_id = $run AND attempt = $att"
token=$(python3 -c 'import hmac, hashlib, sys
print(hmac.new(open(sys.argv[1], "rb").read(), sys.argv[2].encode(), hashlib.sha256).hexdigest())' \
  "$T/db/artifacts/upload.key" "$run:$att")
put() { curl -s -o /dev/null -w '%{http_code}' -T "$1" "http://127.0.0.1:$ART/upload/$run/$att/renders/extra.png" "${@:2}"; }
[ "$(put "$T/good.bin")" = 401 ] || fail "an upload without a token was not refused with 401"
[ "$(put "$T/good.bin" -H "Authorization: Bearer $(printf '0%.0s' $(seq 64))")" = 401 ] || fail "a wrong token was not refused"
[ "$(put "$T/bad.bin" -H "Authorization: Bearer $token")" = 422 ] || fail "a body with another sha256 was not refused with 422"
[ "$(q "SELECT state FROM artifacts WHERE name = 'renders/extra.png'")" = expected ] || fail "a refused body changed the row"
[ "$(put "$T/good.bin" -H "Authorization: Bearer $token")" = 201 ] || fail "the right body was not stored"
[ "$(q "SELECT state FROM artifacts WHERE name = 'renders/extra.png'")" = stored ] || fail "the row is not stored"
[ "$(put "$T/good.bin" -H "Authorization: Bearer $token")" = 200 ] || fail "a repeated upload is not 200"
# Retention: a newer sweep finishes; at the next start sweep A (keep_sweeps: 1) loses its files.
gate_spec "$T/b.yaml" it-art-b 1 0.2 ", fake_ply_kb: 20"
b=$("$SW" submit "$T/b.yaml" --coordinator "$CTL") || fail "submit b"
b_stored() {
  [ "$(q "SELECT status FROM sweeps WHERE id = $b")" != running ] &&
    [ "$(q "SELECT COUNT(*) FROM artifacts WHERE state = 'expected'")" = 0 ]
}
wait_until 120 b_stored || fail "sweep b's artifacts not stored"
kill -TERM "$PID_coord"
wait "$PID_coord" || true
coordinator coord2
kept() {
  [ "$(q "SELECT COUNT(*) FROM artifacts ar JOIN attempts a ON a.id = ar.attempt_id JOIN runs r ON r.id = a.run_id JOIN pairs p ON p.id = r.pair_id WHERE p.sweep_id = $a AND ar.state = 'stored'")" = 0 ]
}
wait_until 30 kept || fail "sweep a's artifacts survived its retention rule"
q "SELECT ar.state, ar.reason FROM artifacts ar LIMIT 1"
[ -z "$(find "$T/db/artifacts/$a" -type f 2>/dev/null)" ] || fail "files of sweep a are still on disk: $(find "$T/db/artifacts/$a" -type f)"
[ "$(q "SELECT COUNT(*) FROM artifacts ar JOIN attempts a ON a.id = ar.attempt_id JOIN runs r ON r.id = a.run_id JOIN pairs p ON p.id = r.pair_id WHERE p.sweep_id = $b AND ar.state = 'stored'")" -gt 0 ] ||
  fail "sweep b lost its artifacts"
code=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$HTTP$ply")
[ "$code" = 404 ] || fail "a deleted artifact still downloads (HTTP $code)"
# Uploads that cannot succeed never cost a result: workers told a store URL where nothing
# listens still deliver every result, and the sweep ends. A file over max_file_mb stays on the
# worker (final.ply of 1,100 KiB against a 1 MiB limit).
kill -TERM "$PID_coord2"
wait "$PID_coord2" || true
coordinator coord3 --artifacts-url "http://127.0.0.1:$((PORT + 4))"
gate_spec "$T/c.yaml" it-art-c 2 0.2 ", fake_ply_kb: 1100"
printf 'artifacts: {max_file_mb: 1}\n' >>"$T/c.yaml"
c=$("$SW" submit "$T/c.yaml" --coordinator "$CTL") || fail "submit c"
c_done() { [ "$(q "SELECT status FROM sweeps WHERE id = $c")" = done ]; }
wait_until 120 c_done || fail "sweep c did not finish while uploads failed: $(q "SELECT status FROM sweeps WHERE id = $c")"
c_runs="JOIN attempts a ON a.id = ar.attempt_id JOIN runs r ON r.id = a.run_id JOIN pairs p ON p.id = r.pair_id WHERE p.sweep_id = $c"
ok=$(q "SELECT COUNT(*) FROM attempts a JOIN runs r ON r.id = a.run_id JOIN pairs p ON p.id = r.pair_id WHERE p.sweep_id = $c AND a.status IN ('ok', 'contaminated')")
[ "$ok" -ge 4 ] || fail "sweep c: only $ok results stored"
[ "$(q "SELECT COUNT(*) FROM artifacts ar $c_runs AND ar.name = 'final.ply'")" = 0 ] || fail "an over-limit final.ply was announced"
[ "$(q "SELECT COUNT(*) FROM artifacts ar $c_runs AND ar.state = 'stored'")" = 0 ] || fail "stored through a dead URL?"
[ "$(q "SELECT COUNT(*) FROM artifacts ar $c_runs AND ar.name = 'result.json' AND ar.state = 'expected'")" -ge 4 ] ||
  fail "sweep c's result.json files are not expected"
grep -q "over the store's limit" "$T/w1.log" "$T/w2.log" || fail "no log line for the file over the limit"
grep -q "will retry" "$T/w1.log" "$T/w2.log" || fail "no retried upload in the workers' logs"
echo PASS
