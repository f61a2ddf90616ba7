#!/usr/bin/env bash
# Integration (browser): headless Chromium (Debian's chromium) on the live dashboard of a running
# gate and on the HTML report of the finished gate, checked by browser_check.py: every chart a
# Chart.js canvas holding data with pixels drawn, no console error, no failed request;
# screenshots under BUILD/screenshots/. The report is made where /usr/share/javascript is hidden
# (a private mount namespace), so its charts can only come from the copy embedded at build time.
# Then the dashboard listening beyond loopback: a request without the token is refused (401),
# with it served, and Chromium draws the dashboard opened with the token in its address.
. "$(dirname "$0")/lib.sh"
PY=/usr/bin/python3 # Debian's interpreter: python3-websocket is installed for it
CHECK="$(dirname "$0")/browser_check.py"
command -v chromium >/dev/null || fail "this test needs chromium (scripts/install-deps.sh)"
"$PY" -c "import websocket" 2>/dev/null || fail "this test needs python3-websocket (scripts/install-deps.sh)"
command -v curl >/dev/null || fail "this test needs curl"
# Chromium's profile under the scratch directory: the cleanup of lib.sh ends whatever names it.
export TMPDIR="$T"
SHOTS="$BIN/../screenshots"
mkdir -p "$SHOTS"
HTTP=$((PORT + 1))
gate_spec "$T/gate.yaml" it-browser 6 1.5
DB="$T/db/sw.db"
start local "$SW" local "$T/gate.yaml" --workers 2 --db "$DB" --heartbeat-ms 200 --http "$HTTP"
api() { curl -fsS "http://127.0.0.1:$HTTP/api/dashboard"; }
# Running, with a first pair in: the gate's verdict is forming.
running_with_a_pair() {
  api | jq -e '.sweeps[0].status == "running" and .sweeps[0].gates[0].pairs_done >= 1' >/dev/null
}
wait_until 150 running_with_a_pair || fail "no pair finished while the sweep ran: $(api 2>&1 | head -c 600)"
"$PY" "$CHECK" "http://127.0.0.1:$HTTP/" "$SHOTS/dashboard-running.png" --min-charts 6 \
  --wait-for "window.swDashReady" --expect-text "so far" --expect-text "it-browser" \
  --expect-text "(live, " ||
  fail "the live dashboard did not draw every chart"
wait_until 170 sh -c "! kill -0 $PID_local" || fail "the gate did not finish"
wait "$PID_local" || fail "local exited $?"
grep -qiE "adopt|reject|inconclusive" "$T/local.log" || fail "no verdict printed"

# The report, made where the system's Chart.js cannot be read.
HTML="$T/report.html"
if unshare -rm true 2>/dev/null; then
  unshare -rm sh -c 'mount -t tmpfs none /usr/share/javascript 2>/dev/null ||
                       mount -t tmpfs none /usr/share; [ ! -e /usr/share/javascript/chart.js ] &&
                     exec "$0" report --db "$1" --format html -o "$2"' "$SW" "$DB" "$HTML" ||
    fail "report without /usr/share/javascript failed"
  echo "report made with /usr/share/javascript hidden (mount namespace)"
else
  # No user namespaces here: the executable names no path under /usr/share/javascript at all,
  # so it cannot have read one.
  ! grep -q /usr/share/javascript "$SW" || fail "splatsweep still refers to /usr/share/javascript"
  "$SW" report --db "$DB" --format html -o "$HTML" || fail "report failed"
  echo "report made by an executable that refers to no /usr/share/javascript path"
fi
grep -q "Chart.js v3.9.1" "$HTML" || fail "the report does not carry Chart.js"
cp "$HTML" "$SHOTS/report.html"
"$PY" "$CHECK" "file://$HTML" "$SHOTS/report.png" --min-charts 6 --expect-text "it-browser" ||
  fail "the report did not draw every chart"

# A grid's report: its Pareto front, curves and windows (a separate store, 4 short runs).
cat >"$T/grid.yaml" <<YAML
name: it-browser-grid
kind: grid
trainer:
  exec:
    command: ["$FAKE", "train", "--out", "{out}", "{set}", "--progress"]
base: {seed: 7, fake_cv: 0.004, fake_sleep_s: 0.3}
parameters:
  fake_base: [80, 100]
  fake_psnr: [35.5, 36.8]
repeats: 1
contamination: {settle_s: 0.5, sample_interval_s: 0.25}
YAML
mkdir -p "$T/grid"
"$SW" local "$T/grid.yaml" --workers 2 --db "$T/grid/sw.db" --heartbeat-ms 200 >"$T/grid.log" 2>&1 ||
  fail "the grid failed"
"$SW" report --db "$T/grid/sw.db" --format html -o "$T/grid.html" || fail "grid report failed"
"$PY" "$CHECK" "file://$T/grid.html" "$SHOTS/report-grid.png" --min-charts 3 \
  --expect-text "Pareto front" --expect-text "it-browser-grid" || fail "the grid report did not draw every chart"

# Beyond loopback the token is required.
start coord "$SW" coordinator --bind-work "tcp://127.0.0.1:$((PORT + 2))" \
  --bind-control "tcp://127.0.0.1:$((PORT + 3))" --db "$DB" --insecure \
  --http $((PORT + 4)) --http-bind 0.0.0.0
OPEN="http://127.0.0.1:$((PORT + 4))"
wait_until 30 curl -sS -o /dev/null "$OPEN/" || fail "the dashboard did not start"
TOKEN=$(cat "$DB.http-token")
grep -q "token=$TOKEN" "$T/coord.log" || fail "the token was not printed at start"
code=$(curl -sS -o "$T/refused.txt" -w '%{http_code}' "$OPEN/api/dashboard")
[ "$code" = 401 ] || fail "a request without the token got $code"
! grep -q it-browser "$T/refused.txt" || fail "the refusal leaked data"
code=$(curl -sS -o "$T/dash.json" -w '%{http_code}' "$OPEN/api/dashboard?token=$TOKEN")
[ "$code" = 200 ] || fail "a request with the token got $code"
jq -e '.sweeps[0].name == "it-browser" and .sweeps[0].status == "done"' "$T/dash.json" >/dev/null ||
  fail "dashboard JSON: $(head -c 400 "$T/dash.json")"
code=$(curl -sS -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$OPEN/sweep/1")
[ "$code" = 200 ] || fail "the report with the bearer token got $code"
"$PY" "$CHECK" "$OPEN/?token=$TOKEN" "$SHOTS/dashboard-token.png" --min-charts 6 \
  --wait-for "window.swDashReady" --expect-text "it-browser" --expect-text "(live, " ||
  fail "the dashboard opened with its token did not draw every chart"
echo "screenshots in $(cd "$SHOTS" && pwd)"
echo PASS
