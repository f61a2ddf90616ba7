/* dashboard.js: the live dashboard page (coordinator/sw_dash.c; docs/dashboard.md). Polls
 * /api/dashboard every two seconds and draws sweeps with progress bars and expected time left,
 * gates with the verdict as it forms, workers with state, current run, iteration progress and
 * last load window; below them the report charts (sw_charts.js) of one sweep, the one named by
 * #sweep=ID in the address or else the newest running one, redrawn when it has new runs.
 * Read-only: it only sends GETs. window.swDashReady turns true once data and charts are shown. */
(function () {
  'use strict';
  var POLL_MS = 2000;
  var token = new URLSearchParams(location.search).get('token');
  var shown = {id: null, done: -1};

  function get(path) {
    var h = token ? {Authorization: 'Bearer ' + token} : {};
    return fetch(path, {headers: h, credentials: 'same-origin', cache: 'no-store'})
      .then(function (r) {
        if (!r.ok) return r.text().then(function (t) { throw new Error(r.status + ': ' + t); });
        return r.json();
      });
  }
  function el(tag, attrs, kids) {
    var e = document.createElement(tag);
    for (var k in attrs || {}) {
      if (k === 'text') e.textContent = attrs[k];
      else if (k === 'cls') e.className = attrs[k];
      else e.setAttribute(k, attrs[k]);
    }
    (kids || []).forEach(function (c) {
      e.appendChild(typeof c === 'string' ? document.createTextNode(c) : c);
    });
    return e;
  }
  function bar(frac, label) {
    var f = Math.max(0, Math.min(1, frac || 0));
    var inner = el('span');
    inner.style.width = (100 * f).toFixed(1) + '%';
    return el('span', {}, [el('span', {cls: 'bar', title: label}, [inner]), ' ' + label]);
  }
  function dur(s) {
    if (s === null || s === undefined) return '-';
    s = Math.round(s);
    if (s < 90) return s + ' s';
    if (s < 5400) return Math.round(s / 60) + ' min';
    return (s / 3600).toFixed(1) + ' h';
  }
  function pct(v, d) { return v === null || v === undefined ? '-' : (100 * v).toFixed(d) + '%'; }
  function num(v, d) { return typeof v === 'number' ? v.toFixed(d) : '-'; }
  function withToken(href) { return token ? href + '?token=' + encodeURIComponent(token) : href; }

  function gateCell(g) {
    var v = g.verdict || 'inconclusive';
    var kids = [el('b', {text: g.name + ': '}),
                el('span', {cls: v, text: g.final ? v : (g.verdict ? v + ' so far' : 'no look yet')})];
    var detail = 'pairs ' + g.pairs_done + '/' + g.n + (g.max > g.n ? ' (max ' + g.max + ')' : '') +
                 ', look ' + g.looks;
    if (typeof g.delta === 'number')
      detail += '; delta ' + pct(g.delta, 2) + (typeof g.threshold === 'number'
          ? ' vs threshold ' + pct(g.threshold, 2) : ' (the threshold needs 2 pairs)');
    if (g.interval_pct && typeof g.interval_pct[0] === 'number')
      detail += '; interval ' + num(g.interval_pct[0], 2) + '..' + num(g.interval_pct[1], 2) + '%';
    var sq = g.sequential;
    if (sq && sq.decision && sq.decision !== 'none')
      detail += '; sequential: ' + sq.decision + (typeof sq.z === 'number' ?
          ' (z ' + num(sq.z, 2) + ' vs bound ' + num(sq.z_bound, 2) + ', information ' +
          pct(sq.info_frac, 0) + ')' : '');
    kids.push(el('br'));
    kids.push(el('span', {cls: 'muted', text: detail}));
    return el('div', {}, kids);
  }

  function sweepsTable(d) {
    var t = el('table', {}, [el('tr', {}, ['id', 'sweep', 'status', 'runs', 'time left',
      'gates', 'pages'].map(function (h) { return el('th', {cls: 'l', text: h}); }))]);
    d.sweeps.forEach(function (s) {
      var r = s.runs;
      var link = function (href, text) { return el('a', {href: withToken(href), text: text}); };
      var chartsLink = el('a', {href: '#sweep=' + s.id, text: 'charts'});
      t.appendChild(el('tr', {}, [
        el('td', {text: String(s.id)}),
        el('td', {cls: 'l'}, [el('b', {text: s.name}), ' (' + s.kind + ')']),
        el('td', {cls: 'l', text: s.status}),
        el('td', {cls: 'l'}, [bar(s.progress, r.done + '/' + r.total + ' runs' +
                                  (r.running ? ', ' + r.running + ' running' : ''))]),
        el('td', {cls: 'l', text: s.status === 'running' ? (s.eta_s === null ? 'after the first run'
                                    : dur(s.eta_s)) : '-',
                  title: 'mean run ' + dur(s.mean_run_s)}),
        el('td', {cls: 'l'}, s.gates.length ? s.gates.map(gateCell) : [el('span', {cls: 'muted', text: 'grid'})]),
        el('td', {cls: 'l'}, [link('sweep/' + s.id, 'report'), ' ', link('pareto/' + s.id, 'pareto'),
                              ' ', chartsLink])]));
    });
    return d.sweeps.length ? t : el('p', {cls: 'muted', text: 'No sweeps yet.'});
  }

  function workersTable(d) {
    if (!d.workers.length) return el('p', {cls: 'muted', text: 'No worker has connected yet.'});
    var t = el('table', {}, [el('tr', {}, ['worker', 'state', 'current run', 'progress',
      'last window'].map(function (h) { return el('th', {cls: 'l', text: h}); }))]);
    d.workers.forEach(function (w) {
      var run = w.run ? 'sweep ' + w.sweep + ', run ' + w.run + (w.arm ? ' (' + w.arm + ')' : '')
          : w.lease ? 'lease ' + w.lease + ': waiting to start (quiet wait or host lock)' : '-';
      var prog = !w.run ? '-' : w.progress !== null && w.progress !== undefined
          ? bar(w.progress, w.iter + '/' + w.iterations + ' it, ' + num(w.train_s, 1) + ' s')
          : 'iteration ' + w.iter + ', ' + num(w.train_s, 1) + ' s';
      var lw = w.last_window;
      var win = !lw ? '-' : lw.status + ': cpu_other max ' + num(lw.cpu_other_max, 2) +
                ', mean ' + num(lw.cpu_other_mean, 2) + ', load1 ' + num(lw.load1_pre_max, 2) +
                (typeof lw.gpu_util_max === 'number' ? ', GPU ' + pct(lw.gpu_util_max, 0) : '') +
                (lw.flag_reason ? ' (' + lw.flag_reason + ')' : '');
      t.appendChild(el('tr', {}, [el('td', {cls: 'l', text: w.id}),
        el('td', {cls: 'l', text: w.state}), el('td', {cls: 'l', text: run}),
        el('td', {cls: 'l'}, [prog]), el('td', {cls: lw && lw.status !== 'ok' ? 'l warn' : 'l', text: win})]));
    });
    return t;
  }

  function pick(d) {
    var m = /sweep=(\d+)/.exec(location.hash);
    if (m) return Number(m[1]);
    var running = d.sweeps.filter(function (s) { return s.status === 'running'; });
    return running.length ? running[0].id : d.sweeps.length ? d.sweeps[0].id : null;
  }

  function drawCharts(d) {
    var id = pick(d);
    var sw = d.sweeps.filter(function (s) { return s.id === id; })[0];
    var box = document.getElementById('dash-charts');
    if (!sw) {
      box.textContent = '';
      return Promise.resolve();
    }
    if (shown.id === id && shown.done === sw.runs.done) return Promise.resolve();
    return get('api/report/' + id).then(function (rep) {
      box.querySelectorAll('canvas').forEach(function (c) {
        var ch = Chart.getChart(c);
        if (ch) ch.destroy();
      });
      box.textContent = '';
      document.getElementById('dash-charts-title').textContent =
          'Charts of sweep ' + id + ' (' + sw.name + ')';
      swCharts.sweep(rep.sweeps[0], box);
      shown = {id: id, done: sw.runs.done};
    });
  }

  function poll() {
    get('api/dashboard').then(function (d) {
      var live = d.live ? 'live, ' + (d.live.age_ms / 1000).toFixed(1) + ' s ago'
                        : 'no coordinator snapshot: the store only';
      document.getElementById('dash-state').textContent = '(' + live + ')';
      var s = document.getElementById('dash-sweeps');
      s.textContent = '';
      s.appendChild(sweepsTable(d));
      var w = document.getElementById('dash-workers');
      w.textContent = '';
      w.appendChild(workersTable(d));
      return drawCharts(d);
    }).then(function () {
      window.swDashReady = true;
    }, function (e) {
      document.getElementById('dash-state').textContent = '(cannot read the dashboard: ' + e.message + ')';
    }).then(function () { setTimeout(poll, POLL_MS); });
  }
  window.addEventListener('hashchange', function () { shown = {id: null, done: -1}; });
  poll();
})();
