#!/usr/bin/python3
"""browser_check.py: opens a page in headless Chromium and checks that every chart drew.

Usage: browser_check.py URL SCREENSHOT.png [--min-charts N] [--wait-for JS_EXPR]
                        [--expect-text TEXT]... [--expect-js JS_EXPR]...

Starts Debian's `chromium --headless` with a private profile and the DevTools protocol on a pipe-
free local port (chosen by Chromium, read from DevToolsActivePort), loads URL, waits until the
page has loaded (and, with --wait-for, until the expression is true, e.g. a dashboard that
fetches its data), then checks:
  - no console error, no uncaught exception, no failed request of the page;
  - at least N <canvas> elements (--min-charts), each with a Chart.js chart holding data, and
    each with pixels that are not blank (some pixels differ from the canvas's first pixel);
  - every --expect-text string is in the page's visible text;
  - every --expect-js expression is true once the charts are drawn (what a chart shows);
and saves a full-page screenshot to SCREENSHOT.png. Exit 0 when every check passes, 1 with the
reasons otherwise, 2 on bad usage. Uses only python3-websocket (Debian) besides the standard
library."""
import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import websocket

# Runs in the page: for every canvas, whether a Chart.js chart owns it, how many data values its
# datasets hold, and how many sampled pixels differ from the top-left one (a blank canvas has 0).
PROBE = r"""
(function () {
  var out = [];
  document.querySelectorAll('canvas').forEach(function (c, i) {
    var ch = (typeof Chart !== 'undefined') ? Chart.getChart(c) : null;
    var values = 0;
    if (ch) ch.data.datasets.forEach(function (d) {
      d.data.forEach(function (v) { if (v !== null && v !== undefined) values++; });
    });
    var differ = 0, w = c.width, h = c.height;
    if (w > 0 && h > 0) {
      var px = c.getContext('2d').getImageData(0, 0, w, h).data;
      var r = px[0], g = px[1], b = px[2], a = px[3];
      for (var k = 0; k < px.length; k += 4 * 7)
        if (px[k] !== r || px[k + 1] !== g || px[k + 2] !== b || px[k + 3] !== a) differ++;
    }
    var fig = c.closest('figure');
    var cap = fig ? (fig.querySelector('figcaption') || {}).textContent || '' : '';
    out.push({index: i, chart: !!ch, type: ch ? ch.config.type : null, values: values,
              width: w, height: h, differing_pixels: differ, caption: cap.slice(0, 80)});
  });
  var notes = [];
  document.querySelectorAll('figure.chart').forEach(function (f) {
    if (!f.querySelector('canvas')) notes.push(f.textContent.slice(0, 120));
  });
  return JSON.stringify({canvases: out, notes: notes, chartjs: typeof Chart !== 'undefined' ? Chart.version : null,
                         title: document.title});
})()
"""


class Cdp:
    """A minimal DevTools protocol client over one WebSocket: commands and collected events."""

    def __init__(self, url):
        self.ws = websocket.create_connection(url, timeout=30)
        self.next_id = 0
        self.events = []

    def call(self, method, **params):
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            if "method" in msg:
                self.events.append(msg)

    def pump(self, seconds):
        """Collects events for up to seconds."""
        end = time.time() + seconds
        self.ws.settimeout(0.2)
        try:
            while time.time() < end:
                try:
                    msg = json.loads(self.ws.recv())
                except websocket.WebSocketTimeoutException:
                    continue
                if "method" in msg:
                    self.events.append(msg)
        finally:
            self.ws.settimeout(30)


def evaluate(cdp, expr):
    r = cdp.call("Runtime.evaluate", expression=expr, returnByValue=True)
    if "exceptionDetails" in r:
        raise RuntimeError("evaluating %r: %s" % (expr[:60], r["exceptionDetails"].get("text")))
    return r["result"].get("value")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("url")
    ap.add_argument("screenshot")
    ap.add_argument("--min-charts", type=int, default=1)
    ap.add_argument("--wait-for", default=None)
    ap.add_argument("--expect-text", action="append", default=[])
    ap.add_argument("--expect-js", action="append", default=[],
                    help="a JavaScript expression that must be true once the charts are drawn")
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("FAIL: chromium not found (apt-get install chromium)", file=sys.stderr)
        return 2
    profile = tempfile.mkdtemp(prefix="sw-chromium-")
    proc = subprocess.Popen(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--no-default-browser-check", "--disable-extensions", "--user-data-dir=" + profile,
         "--remote-debugging-port=0", "--window-size=1280,900", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    problems = []
    try:
        port_file = os.path.join(profile, "DevToolsActivePort")
        end = time.time() + a.timeout
        while not os.path.exists(port_file) or os.path.getsize(port_file) == 0:
            if proc.poll() is not None or time.time() > end:
                print("FAIL: chromium did not start its DevTools endpoint", file=sys.stderr)
                return 1
            time.sleep(0.1)
        port = open(port_file).read().split()[0]
        # The page target about:blank opened with.
        import urllib.request
        targets = json.load(urllib.request.urlopen("http://127.0.0.1:%s/json/list" % port))
        page = [t for t in targets if t.get("type") == "page"][0]
        cdp = Cdp(page["webSocketDebuggerUrl"])
        for domain in ("Page", "Runtime", "Log", "Network"):
            cdp.call(domain + ".enable")
        cdp.call("Page.navigate", url=a.url)
        # Loaded: document complete; then, for a page that fetches, the page's own condition.
        loaded = False
        while time.time() < end:
            cdp.pump(0.3)
            if evaluate(cdp, "document.readyState") == "complete" and (
                    not a.wait_for or evaluate(cdp, "!!(" + a.wait_for + ")")):
                loaded = True
                break
        if not loaded:
            problems.append("the page did not finish loading%s within %.0f s" %
                            (" (" + a.wait_for + ")" if a.wait_for else "", a.timeout))
        cdp.pump(0.5)
        probe = json.loads(evaluate(cdp, PROBE))
        # Full-page screenshot: the layout's full height.
        metrics = cdp.call("Page.getLayoutMetrics")
        size = metrics.get("cssContentSize") or metrics["contentSize"]
        shot = cdp.call("Page.captureScreenshot", format="png", captureBeyondViewport=True,
                        clip={"x": 0, "y": 0, "width": size["width"],
                              "height": min(size["height"], 16000), "scale": 1})
        with open(a.screenshot, "wb") as f:
            f.write(base64.b64decode(shot["data"]))
        for ev in cdp.events:
            m, p = ev["method"], ev.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                problems.append("uncaught exception: %s %s" % (
                    d.get("text"), (d.get("exception") or {}).get("description", "")))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                problems.append("console.%s: %s" % (p["type"], " ".join(
                    str(x.get("value", x.get("description", ""))) for x in p.get("args", []))))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                problems.append("console error: %s (%s)" % (p["entry"].get("text"),
                                                            p["entry"].get("url", "")))
            elif m == "Network.loadingFailed" and not p.get("canceled"):
                problems.append("request failed: %s" % p.get("errorText"))
        body = evaluate(cdp, "document.body.innerText")
        for t in a.expect_text:
            if t not in body:
                problems.append("the page does not show %r" % t)
        for e in a.expect_js:
            if evaluate(cdp, "!!(" + e + ")") is not True:
                problems.append("not true on the page: %s" % e)
        canv = probe["canvases"]
        if probe["chartjs"] is None:
            problems.append("Chart.js is not on the page")
        if len(canv) < a.min_charts:
            problems.append("%d chart(s), expected at least %d" % (len(canv), a.min_charts))
        for c in canv:
            what = "chart %d (%s; %s)" % (c["index"], c["type"], c["caption"])
            if not c["chart"]:
                problems.append("canvas %d has no Chart.js chart" % c["index"])
            elif c["values"] == 0:
                problems.append(what + " holds no data")
            if c["differing_pixels"] == 0:
                problems.append(what + " is blank")
        print("%s: Chart.js %s, %d chart(s): %s" % (
            probe["title"], probe["chartjs"], len(canv),
            ", ".join("%s/%d values/%d px" % (c["type"], c["values"], c["differing_pixels"])
                      for c in canv)))
        for n in probe["notes"]:
            print("  no chart (the data is not there): " + n)
        print("screenshot: %s" % a.screenshot)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(profile, ignore_errors=True)
    for p in problems:
        print("FAIL: " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
