#!/usr/bin/env bash
# Integration: a sweep's notify.webhook (issue 14, item 6). A local HTTP server (python3's
# http.server) answers the first POST with 503 and the rest with 200. A gate that concludes
# reaches it with event "verdict", the verdict the store holds and a link to the dashboard
# (--dashboard-url + /sweep/ID), after a retry; a sweep whose trainer always fails reaches it
# as "sweep_failed". The coordinator's status counts the deliveries.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || fail "this test needs python3"
WORK="tcp://127.0.0.1:$PORT"
CTL="tcp://127.0.0.1:$((PORT + 1))"
HOOK_PORT=$((PORT + 2))
mkdir -p "$T/hooks"
cat >"$T/recv.py" <<'PY'
import http.server, json, os, sys
port, out = int(sys.argv[1]), sys.argv[2]
seen = [0]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        seen[0] += 1
        code = 503 if seen[0] == 1 else 200
        with open(os.path.join(out, "%03d-%d.json" % (seen[0], code)), "wb") as f:
            f.write(body)
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        sys.stderr.write("recv: " + (a[0] % a[1:]) + "\n")
http.server.HTTPServer(("127.0.0.1", port), H).serve_forever()
PY
start recv python3 "$T/recv.py" "$HOOK_PORT" "$T/hooks"
wait_until 15 bash -c "exec 3<>/dev/tcp/127.0.0.1/$HOOK_PORT" || fail "the test's webhook server did not start"
start coord "$SW" coordinator --bind-work "$WORK" --bind-control "$CTL" --db "$T/sw.db" --insecure \
  --heartbeat-ms 200 --max-attempts 2 --dashboard-url "http://dash.example:7780/"
wait_until 15 status_json || fail "coordinator did not answer status"
hook="
notify: {webhook: \"http://127.0.0.1:$HOOK_PORT/hook\"}"
gate_spec "$T/gate.yaml" it-hook 3 0.2
echo "$hook" >>"$T/gate.yaml"
gate_spec "$T/bad.yaml" it-hook-fail 1 0.05 ", fake_exit: 3"
echo "$hook" >>"$T/bad.yaml"
id=$("$SW" submit "$T/gate.yaml" --coordinator "$CTL") || fail "submit"
bad=$("$SW" submit "$T/bad.yaml" --coordinator "$CTL") || fail "submit the failing sweep"
start w1 "$SW" worker --coordinator "$WORK" --insecure --id w1 --work-dir "$T/w1" --heartbeat-ms 200
start w2 "$SW" worker --coordinator "$WORK" --insecure --id w2 --work-dir "$T/w2" --heartbeat-ms 200
# Delivered: the verdict (after the 503 was retried) and the failed sweep.
delivered() {
  grep -l '"event":"verdict"' "$T"/hooks/*-200.json | xargs -r grep -l '"name":"it-hook"' | grep -q . &&
    grep -l '"event":"sweep_failed"' "$T"/hooks/*-200.json | grep -q .
}
wait_until 120 delivered || fail "notifications not delivered: $(ls "$T/hooks"; cat "$T"/hooks/* 2>/dev/null)"
ls "$T/hooks"
ls "$T"/hooks/001-503.json >/dev/null || fail "the first POST was not the refused one"
v=$(grep -l '"event":"verdict"' "$T"/hooks/*-200.json | xargs grep -l '"name":"it-hook"' | head -1)
jq . "$v"
verdict=$(sqlite3 "$T/sw.db" "SELECT verdict FROM gates WHERE sweep_id = $id")
[ -n "$verdict" ] || fail "the gate has no verdict in the store"
jq -e --arg v "$verdict" --argjson id "$id" '.gate.verdict == $v and .gate.status == "done" and .sweep.id == $id
  and .sweep.name == "it-hook" and (.gate.reasons | length) >= 1 and (.gate.effect_pct | type) == "number"
  and .link == "http://dash.example:7780/sweep/\($id)"' "$v" >/dev/null ||
  fail "verdict notification does not match the store (verdict $verdict)"
f=$(grep -l '"event":"sweep_failed"' "$T"/hooks/*-200.json | head -1)
jq -e --argjson id "$bad" '.sweep.id == $id and .sweep.status == "failed"' "$f" >/dev/null ||
  fail "sweep_failed notification: $(cat "$f")"
# The refused first POST was retried: the same event arrived again with 200.
first=$(jq -c 'del(.sweep.status)' "$T/hooks/001-503.json")
retried=0
for h in "$T"/hooks/*-200.json; do [ "$(jq -c 'del(.sweep.status)' "$h")" = "$first" ] && retried=1; done
[ $retried = 1 ] || fail "the notification refused with 503 was not retried"
status_json >"$T/status.json"
jq -e '.coordinator.webhooks.sent >= 3 and .coordinator.webhooks.failed == 0' "$T/status.json" >/dev/null ||
  fail "webhook counters: $(jq -c .coordinator.webhooks "$T/status.json")"
# A bad webhook URL is a bad spec: FILE:LINE:COLUMN, exit 2.
gate_spec "$T/badurl.yaml" it-hook-url 1 0.05
printf 'notify: {webhook: "ftp://x/y"}\n' >>"$T/badurl.yaml"
set +e
"$SW" check "$T/badurl.yaml" >"$T/badurl.out" 2>&1
rc=$?
set -e
[ $rc = 2 ] && grep -qE "badurl.yaml:[0-9]+:[0-9]+: notify.webhook" "$T/badurl.out" ||
  fail "bad webhook URL: exit $rc: $(cat "$T/badurl.out")"
echo PASS
