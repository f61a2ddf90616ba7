/* sw_charts.js: the charts of splatsweep's HTML pages, drawn by Chart.js from the report JSON
 * (docs/report.md) and the Pareto JSON (docs/pareto-audit.md). Embedded in the executables at
 * build time (coordinator/sw_html.h); the report page, the Pareto page and the dashboard all
 * call it, so a chart is defined once. Every chart is a <figure> with a caption saying what to
 * read from it; a chart whose data the store does not hold is replaced by a note saying so.
 *   swCharts.report(report)         every sweep of a report page (containers charts-ID-N)
 *   swCharts.sweep(sweep, element)  one sweep's charts into element (the dashboard)
 *   swCharts.pareto(pareto, element) the Pareto front page */
(function () {
  'use strict';
  var OFF = '#4c6a8a', ON = '#d9622b', BAD = '#c00000', GREY = 'rgba(120,120,120,0.18)';
  var PAL = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2',
             '#7f7f7f', '#bcbd22', '#17becf'];

  function num(v) { return typeof v === 'number' && isFinite(v) ? v : null; }
  function metric(run, k) { return run && run.metrics ? num(run.metrics[k]) : null; }
  function fmt(v, d) { return v === null || v === undefined ? '-' : Number(v).toFixed(d); }
  function flagged(run) { return !!(run && run.contaminated); }
  /* The gate engine's model-size check (docs/gate-rules.md section 3) flagged this arm's run of
   * pair p: its verdict's model_size.flagged names the pair by its store index. */
  function sizeFlagged(g, p, arm) {
    var f = g.model_size && g.model_size.flagged;
    return !!(f && f.some(function (x) { return x.pair_index === p.index && x.arm === arm; }));
  }
  /* A run the gate set aside: contaminated by load, or trained a model of another size. */
  function setAside(g, p, arm) { return flagged(p[arm]) || sizeFlagged(g, p, arm); }
  /* A pair with either run set aside: its delta compares runs the gate does not trust. */
  function pairSetAside(g, p) { return setAside(g, p, 'off') || setAside(g, p, 'on'); }
  function text(tag, s, cls) {
    var e = document.createElement(tag);
    e.textContent = s;
    if (cls) e.className = cls;
    return e;
  }

  /* A figure with a canvas and its caption, appended to parent; returns the canvas. */
  function figure(parent, title, caption) {
    var f = document.createElement('figure');
    f.className = 'chart';
    var box = document.createElement('div');
    box.className = 'box';
    var c = document.createElement('canvas');
    box.appendChild(c);
    f.appendChild(box);
    var cap = document.createElement('figcaption');
    cap.appendChild(text('b', title + '. '));
    cap.appendChild(document.createTextNode(caption));
    f.appendChild(cap);
    parent.appendChild(f);
    return c;
  }
  /* The same place for a chart the data cannot fill, saying why. */
  function note(parent, title, why) {
    var f = document.createElement('figure');
    f.className = 'chart';
    f.appendChild(text('figcaption', title + ': ' + why, 'muted'));
    parent.appendChild(f);
  }
  /* Legend swatches in a dataset's own colour (legendColor), not its first point's, which is
   * red when that run was flagged. */
  function legendLabels(ch) {
    var items = Chart.defaults.plugins.legend.labels.generateLabels(ch);
    items.forEach(function (i) {
      var d = ch.data.datasets[i.datasetIndex];
      if (d && d.legendColor) i.fillStyle = i.strokeStyle = d.legendColor;
    });
    return items;
  }
  function chart(canvas, cfg) {
    cfg.options = cfg.options || {};
    var pl = cfg.options.plugins = cfg.options.plugins || {};
    pl.legend = pl.legend || {};
    pl.legend.labels = pl.legend.labels || {};
    pl.legend.labels.generateLabels = legendLabels;
    cfg.options.animation = false; /* drawn at once: printable, and a screenshot is complete */
    cfg.options.maintainAspectRatio = false;
    cfg.options.responsive = true;
    return new Chart(canvas, cfg);
  }
  function axis(title, extra) {
    var a = {title: {display: true, text: title}};
    for (var k in extra || {}) a[k] = extra[k];
    return a;
  }
  function pairLabel(p) { return 'pair ' + p.index + (p.is_replacement ? ' (repl.)' : ''); }

  /* 1. Is it significant? Each pair's delta, the paired interval and the threshold band. */
  function deltaChart(el, g) {
    var pairs = g.pairs.filter(function (p) { return num(p.delta_pct) !== null; });
    var title = 'Per-pair change in ' + g.metric;
    if (!pairs.length) return note(el, title, 'no pair has both runs yet');
    var labels = pairs.map(pairLabel);
    var thr = num(g.threshold) !== null ? 100 * g.threshold : null;
    var paired = g.paired || {}, ci = paired.t_interval_pct || [null, null];
    var eff = num(paired.effect_pct), delta = num(g.delta) !== null ? 100 * g.delta : null;
    var flat = function (v) { return labels.map(function () { return v; }); };
    var ds = [];
    if (thr !== null) {
      ds.push({label: 'threshold +' + fmt(thr, 2) + '%', data: flat(thr), borderColor: '#999',
               borderDash: [4, 3], pointRadius: 0, borderWidth: 1, fill: false});
      ds.push({label: 'threshold band', data: flat(-thr), borderColor: '#999',
               borderDash: [4, 3], pointRadius: 0, borderWidth: 1, fill: '-1',
               backgroundColor: GREY});
    }
    if (num(ci[0]) !== null && num(ci[1]) !== null) {
      ds.push({label: 'paired 95% interval', data: flat(ci[1]), borderColor: 'rgba(30,90,200,.6)',
               pointRadius: 0, borderWidth: 1, fill: false});
      ds.push({label: 'interval', data: flat(ci[0]), borderColor: 'rgba(30,90,200,.6)',
               pointRadius: 0, borderWidth: 1, fill: '-1',
               backgroundColor: 'rgba(30,90,200,0.15)'});
    }
    if (delta !== null)
      ds.push({label: 'mean delta ' + fmt(delta, 2) + '%', data: flat(delta), borderColor: ON,
               pointRadius: 0, borderWidth: 2, fill: false});
    /* Once per pair, so a pair's colour and marker cannot disagree. */
    var aside = pairs.map(function (p) { return pairSetAside(g, p); });
    ds.push({label: 'pair delta', data: pairs.map(function (p) { return p.delta_pct; }),
             showLine: false, pointRadius: 5, borderColor: '#222',
             pointBackgroundColor: aside.map(function (a) { return a ? BAD : '#222'; }),
             pointStyle: aside.map(function (a) { return a ? 'crossRot' : 'circle'; })});
    var better = g.config && g.config.direction === 'higher' ? 'above' : 'below';
    var cap = 'Dots: each pair\'s change (on - off) / off in ' + g.metric + ', in %; ' + better +
              ' zero is better; red crosses are pairs with a flagged run (load, or a model of another ' +
              'size than its arm\'s). ';
    if (thr !== null)
      cap += 'Grey band: the lab threshold \u00b1' + fmt(thr, 2) + '% = max(k x CV_off, floor); the' +
             ' lab rule calls the change significant when the mean delta (' + fmt(delta, 2) +
             '%) lies outside it. ';
    if (num(ci[0]) !== null)
      cap += 'Blue band: the paired t interval of the effect, ' + fmt(ci[0], 2) + '% to ' +
             fmt(ci[1], 2) + '% (effect ' + fmt(eff, 2) + '%); adoption also needs it to exclude' +
             ' zero on the side of the delta. ';
    cap += 'Verdict: ' + g.verdict + (g.final ? '.' : ' (not final).');
    chart(figure(el, title, cap), {type: 'line', data: {labels: labels, datasets: ds},
      options: {plugins: {legend: {labels: {filter: function (i) {
        return i.text !== 'interval' && i.text !== 'threshold band'; }}}},
        scales: {y: axis('change in ' + g.metric + ' (%)')}}});
  }

  /* 2. Is one arm noisier? Both arms' values side by side, with mean +- sd. */
  function distChart(el, g) {
    var title = 'Distribution of ' + g.metric + ' per arm';
    var pts = {off: [], on: []};
    g.pairs.forEach(function (p, i) {
      ['off', 'on'].forEach(function (arm, a) {
        var v = metric(p[arm], g.metric);
        /* spread the dots of one arm a little sideways, by pair, so equal values stay visible */
        if (v !== null)
          pts[arm].push({x: a + ((i % 7) - 3) * 0.035, y: v, flag: setAside(g, p, arm),
                          pair: p.index});
      });
    });
    if (!pts.off.length && !pts.on.length) return note(el, title, 'no run has finished yet');
    var lab = g.lab || {};
    var ds = [];
    ['off', 'on'].forEach(function (arm, a) {
      var col = a ? ON : OFF;
      ds.push({label: arm + ' runs', data: pts[arm], legendColor: col, backgroundColor: col,
               pointBackgroundColor: pts[arm].map(function (q) { return q.flag ? BAD : col; }),
               pointStyle: pts[arm].map(function (q) { return q.flag ? 'crossRot' : 'circle'; }),
               pointBorderColor: pts[arm].map(function (q) { return q.flag ? BAD : col; }),
               borderColor: col, pointRadius: 4});
      var vs = pts[arm].map(function (q) { return q.y; });
      if (vs.length > 1) {
        var m = vs.reduce(function (s, v) { return s + v; }, 0) / vs.length;
        var sd = Math.sqrt(vs.reduce(function (s, v) { return s + (v - m) * (v - m); }, 0) /
                           (vs.length - 1));
        ds.push({label: arm + ' mean \u00b1 sd', showLine: true, borderColor: col, borderWidth: 3,
                 pointRadius: 0, data: [{x: a + 0.25, y: m - sd}, {x: a + 0.25, y: m + sd}]});
        ds.push({label: arm + ' mean', showLine: false, pointStyle: 'line', pointRadius: 12,
                 borderWidth: 3, borderColor: col, data: [{x: a + 0.25, y: m}]});
      }
    });
    var cap = 'Each dot is one run (red: flagged for load or model size). Bars: mean \u00b1 sd of the arm. CV off ' +
              fmt(100 * num(lab.cv_off), 2) + '%, CV on ' + fmt(100 * num(lab.cv_on), 2) +
              '%, sigma ratio ' + fmt(num(lab.sigma_ratio), 2) + ' (warning above ' +
              fmt(g.config ? num(g.config.sigma_ratio_warn) : null, 1) + '). ';
    cap += lab.sigma_asymmetry
        ? 'WARNING: the arms differ in noise; the threshold uses CV_off, so read the verdict ' +
          'with the noisier arm in mind.'
        : 'The two arms are about equally noisy: the threshold scaled on CV_off is fair to both.';
    chart(figure(el, title, cap), {type: 'scatter', data: {datasets: ds}, options: {
      plugins: {legend: {labels: {filter: function (i) { return !/ mean$/.test(i.text); }}}},
      scales: {x: {min: -0.5, max: 1.5, grid: {display: false},
                   afterBuildTicks: function (ax) { ax.ticks = [{value: 0}, {value: 1}]; },
                   ticks: {callback: function (v) { return v === 0 ? 'off' : 'on'; }}},
               y: axis(g.metric)}}});
  }

  /* 3. Which kernel explains it? Mean share of GPU time per kernel, off vs on. */
  function kernelChart(el, g) {
    var title = 'Kernel shares, off vs on';
    var acc, n;
    /* Clean runs only; where an arm has none yet, every run with timings, said in the caption. */
    function gather(cleanOnly) {
      acc = {};
      n = {off: 0, on: 0};
      g.pairs.forEach(function (p) {
        ['off', 'on'].forEach(function (arm) {
          var r = p[arm];
          if (!r || !r.kernels || !r.kernels.length || (cleanOnly && r.status !== 'ok')) return;
          n[arm]++;
          r.kernels.forEach(function (k) {
            acc[k.name] = acc[k.name] || {off: 0, on: 0, off_ms: 0, on_ms: 0};
            acc[k.name][arm] += num(k.share) || 0;
            acc[k.name][arm + '_ms'] += num(k.gpu_ms) || 0;
          });
        });
      });
      return n.off && n.on;
    }
    var clean = gather(true);
    if (!clean && !gather(false))
      return note(el, title, 'no run of each arm recorded kernel timings yet (the trainer ' +
                  'reports them with GPU timestamps; an exec trainer may not)');
    var names = Object.keys(acc).sort(function (a, b) {
      return acc[b].off + acc[b].on - acc[a].off - acc[a].on; });
    var share = function (arm) { return names.map(function (k) { return 100 * acc[k][arm] / n[arm]; }); };
    var moved = names.slice().sort(function (a, b) {
      var da = Math.abs(acc[a].on_ms / n.on - acc[a].off_ms / n.off);
      var db = Math.abs(acc[b].on_ms / n.on - acc[b].off_ms / n.off);
      return db - da; })[0];
    var k = acc[moved];
    var cap = 'Share of the GPU time of a run per kernel, mean over each arm\'s ' +
              (clean ? 'clean runs' : 'runs, flagged ones included (an arm has no clean run yet)') +
              ' (' + n.off + ' off, ' + n.on + ' on). The kernel whose time moved most is ' + moved +
              ': ' + fmt(k.off_ms / n.off, 1) + ' ms off, ' + fmt(k.on_ms / n.on, 1) +
              ' ms on; a change should show where the arms differ.';
    chart(figure(el, title, cap), {type: 'bar', data: {labels: names, datasets: [
      {label: 'off', data: share('off'), backgroundColor: OFF},
      {label: 'on', data: share('on'), backgroundColor: ON}]},
      options: {indexAxis: 'y', scales: {x: axis('share of GPU time (%)')}}});
  }

  /* 4. Was a run contaminated, and by what? Each run's window against the limits. */
  function windowChart(el, runs, limits, title) {
    runs = runs.filter(function (r) { return r.run && r.run.window && r.run.window.during; });
    if (!runs.length) return note(el, title, 'no run has a load window yet');
    var labels = runs.map(function (r) { return r.label; });
    var get = function (phase, k) {
      return runs.map(function (r) { var w = r.run.window[phase]; return w ? num(w[k]) : null; });
    };
    var colors = function (c, bad) {
      return runs.map(function (r) { return flagged(r.run) ? bad || BAD : c; });
    };
    var lim = limits || {};
    var flat = function (v) { return labels.map(function () { return v; }); };
    var ds = [
      {type: 'bar', label: 'cpu_other max (during)', data: get('during', 'cpu_other_max'),
       backgroundColor: colors('#6f8fb3'), legendColor: '#6f8fb3', yAxisID: 'y'},
      {type: 'bar', label: 'cpu_other mean (during)', data: get('during', 'cpu_other_mean'),
       backgroundColor: colors('#b7c7da', '#e6a0a0'), legendColor: '#b7c7da', yAxisID: 'y'},
      {type: 'line', label: 'load1 max (pre)', data: get('pre', 'load1_max'), borderColor: '#555',
       pointRadius: 3, showLine: false, yAxisID: 'load'}];
    if (num(lim.cpu_other_max) !== null)
      ds.push({type: 'line', label: 'limit cpu_other ' + fmt(lim.cpu_other_max, 2),
               data: flat(lim.cpu_other_max), borderColor: BAD, borderDash: [6, 3],
               pointRadius: 0, borderWidth: 1.5});
    if (num(lim.cpu_other_mean_max) !== null)
      ds.push({type: 'line', label: 'limit mean ' + fmt(lim.cpu_other_mean_max, 2),
               data: flat(lim.cpu_other_mean_max), borderColor: '#e08080', borderDash: [2, 3],
               pointRadius: 0, borderWidth: 1.5});
    if (num(lim.load1_max) > 0)
      ds.push({type: 'line', label: 'limit load1 ' + fmt(lim.load1_max, 2), yAxisID: 'load',
               data: flat(lim.load1_max), borderColor: '#555', borderDash: [2, 2], pointRadius: 0});
    var gpu = get('during', 'gpu_util_max');
    var scales = {y: axis('cores busy outside the trainer', {beginAtZero: true}),
                  load: axis('load1 before the run', {position: 'right', beginAtZero: true,
                                                      grid: {drawOnChartArea: false}})};
    if (gpu.some(function (v) { return v !== null; })) {
      ds.push({type: 'line', label: 'GPU util max (during)', data: gpu, borderColor: '#2ca02c',
               showLine: false, pointStyle: 'triangle', pointRadius: 5, yAxisID: 'gpu'});
      scales.gpu = axis('GPU utilisation', {position: 'right', beginAtZero: true,
                                              grid: {drawOnChartArea: false}});
    }
    var bad = runs.filter(function (r) { return flagged(r.run); });
    var cap = 'Per run: the most and the mean cores used by other processes during the run ' +
              '(bars, left axis), the load average before it (dots, right axis; judged only ' +
              'when the spec sets load1_max)' +
              (scales.gpu ? ', the GPU utilisation where a GPU was sampled (triangles)' : '') +
              ', against the limits of the spec (dashed): a run is flagged when cpu_other ' +
              'stays above the upper line for more than ' + fmt(num(lim.over_max_s), 1) +
              ' s, or its mean is above the lower one, so a short spike over the line is ' +
              'allowed. Red bars are flagged runs (dark: max, light: mean): ';
    cap += bad.length ? bad.map(function (r) {
      return r.label + ' (' + r.run.status + (r.run.flag_reason ? ': ' + r.run.flag_reason : '') +
             ')'; }).join('; ') + '.' : 'none, every window stayed within its limits.';
    chart(figure(el, title, cap), {type: 'bar', data: {labels: labels, datasets: ds},
      options: {scales: scales}});
  }

  /* 5. Where does quality come from? PSNR against training time from the checkpoints. */
  function curveChart(el, runs, title) {
    var ds = [];
    runs.forEach(function (r, i) {
      var cps = (r.run && r.run.checkpoints || []).filter(function (c) {
        return num(c.train_s) !== null && num(c.psnr_db) !== null; });
      if (!cps.length) return;
      var col = r.arm === 'off' ? OFF : r.arm === 'on' ? ON : PAL[i % PAL.length];
      ds.push({label: r.label, showLine: true, borderColor: col, backgroundColor: col,
               pointRadius: 2, borderWidth: 1.5, data: cps.map(function (c) {
                 return {x: c.train_s, y: c.psnr_db, iter: c.iter}; })});
    });
    if (!ds.length) return note(el, title, 'the runs recorded no checkpoints');
    var cap = 'One line per run through its checkpoints: the test-view PSNR reached after so ' +
              'many seconds of training' + (runs[0] && runs[0].arm ? ' (off blue, on orange)' : '') +
              '. A change that is faster at equal quality shifts its lines left; where the lines' +
              ' flatten, more iterations buy little.';
    chart(figure(el, title, cap), {type: 'scatter', data: {datasets: ds}, options: {
      plugins: {legend: {display: !(runs[0] && runs[0].arm) && ds.length <= 12}, tooltip: {callbacks: {label: function (c) {
        return c.dataset.label + ' @ ' + c.raw.iter + ' it: ' + fmt(c.raw.x, 2) + ' s, ' +
               fmt(c.raw.y, 2) + ' dB'; }}}},
      scales: {x: axis('train_s (s)'), y: axis('PSNR (dB)')}}});
  }

  /* The guard: quality per pair, off vs on. */
  function guardChart(el, g) {
    var gm = g.guard_metric, title = 'Guard ' + gm + ' per pair';
    var labels = g.pairs.map(pairLabel);
    var off = g.pairs.map(function (p) { return metric(p.off, gm); });
    var on = g.pairs.map(function (p) { return metric(p.on, gm); });
    if (!off.concat(on).some(function (v) { return v !== null; }))
      return note(el, title, 'no run reported ' + gm);
    var gd = g.guard || {};
    var cap = 'The guard metric of both runs of each pair. Mean off ' + fmt(num(gd.off_mean), 3) +
              ', on ' + fmt(num(gd.on_mean), 3) + ' (difference ' + fmt(num(gd.diff), 3) +
              '); the guard allows a drop of ' + fmt(num(gd.max_drop), 3) + ': ' +
              (gd.evaluated ? (gd.pass ? 'pass' : 'FAIL') : 'not evaluated') + '.';
    chart(figure(el, title, cap), {type: 'line', data: {labels: labels, datasets: [
      {label: 'off', data: off, borderColor: OFF, backgroundColor: OFF},
      {label: 'on', data: on, borderColor: ON, backgroundColor: ON}]},
      options: {scales: {y: axis(gm)}}});
  }

  function gate(sweep, g, el) {
    deltaChart(el, g);
    distChart(el, g);
    guardChart(el, g);
    kernelChart(el, g);
    var runs = [];
    g.pairs.forEach(function (p) {
      ['off', 'on'].forEach(function (arm) {
        if (p[arm]) runs.push({label: 'p' + p.index + ' ' + arm, run: p[arm], arm: arm});
      });
    });
    windowChart(el, runs, sweep.contamination, 'Load window of each run');
    curveChart(el, runs, 'PSNR vs training time (checkpoints)');
  }

  function grid(sweep, el) {
    if (sweep.pareto && sweep.pareto.configurations && sweep.pareto.configurations.length)
      pareto(sweep.pareto, el);
    else
      note(el, 'Pareto front', 'no grid point has finished cleanly yet');
    /* Point numbers on the window chart's axis (the table below names them), the labels in
     * the curve chart's legend. */
    var runs = (sweep.points || []).map(function (p) {
      return {label: '#' + p.index, run: p.run};
    });
    curveChart(el, runs.map(function (r, i) {
      return {label: r.label + ' ' + sweep.points[i].label, run: r.run};
    }), 'PSNR vs training time (checkpoints)');
    windowChart(el, runs, sweep.contamination, 'Load window of each run (point #)');
  }

  /* The Pareto front: a line per configuration through its points in iteration order, the
   * front (points no other beats on both axes) as a dashed line over them. */
  function pareto(P, el) {
    var ds = P.configurations.map(function (c, i) {
      var col = PAL[i % PAL.length];
      return {label: c.id, showLine: true, borderColor: col, backgroundColor: col,
              data: c.points.map(function (p) {
                return {x: p.train_s.mean, y: p.psnr_db.mean, iter: p.iter, n: p.n}; })};
    });
    ds.push({label: 'front', showLine: true, borderDash: [6, 4], borderColor: '#000',
             backgroundColor: 'rgba(0,0,0,0)', pointRadius: 7, data: P.front.map(function (p) {
               return {x: p.train_s, y: p.psnr_db, iter: p.iter, n: p.n}; })});
    var cap = 'Each configuration\'s mean train_s and PSNR at each iteration budget (final runs' +
              ' and checkpoints of longer ones). The dashed line joins the front: ' +
              P.front.length + ' point(s) no other point beats on both time and quality; a ' +
              'configuration off the front is dominated at that budget.';
    chart(figure(el, 'Pareto front: PSNR vs train_s', cap), {type: 'scatter',
      data: {datasets: ds}, options: {scales: {x: axis('train_s (s)'), y: axis('PSNR (dB)')},
        plugins: {tooltip: {callbacks: {label: function (c) {
          var r = c.raw;
          return c.dataset.label + ' @ ' + r.iter + ' it (n=' + r.n + '): ' + fmt(r.x, 2) +
                 ' s, ' + fmt(r.y, 3) + ' dB'; }}}}}});
  }

  function sweep(sw, el) {
    if (sw.points) {
      var box = document.createElement('div');
      box.className = 'charts';
      el.appendChild(box);
      return grid(sw, box);
    }
    (sw.gates || []).forEach(function (g) {
      el.appendChild(text('h4', 'Gate ' + g.name + ': ' + g.verdict + (g.final ? '' : ' (not final)')));
      var box = document.createElement('div');
      box.className = 'charts';
      el.appendChild(box);
      gate(sw, g, box);
    });
  }

  function report(R) {
    R.sweeps.forEach(function (sw) {
      (sw.gates || []).forEach(function (g, gi) {
        var el = document.getElementById('charts-' + sw.id + '-' + gi);
        if (el) gate(sw, g, el);
      });
      var el = document.getElementById('charts-' + sw.id + '-grid');
      if (el && sw.points) grid(sw, el);
    });
  }

  window.swCharts = {report: report, sweep: sweep, gate: gate, grid: grid, pareto: pareto};
})();
