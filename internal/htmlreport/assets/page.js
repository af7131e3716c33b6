// The nanhunt report page: the propagation picture (Apache ECharts, custom
// series on a category grid), the op filter and the cell details. The page
// reads its data from the JSON in #nh-data; everything else is plain HTML.
(function () {
  'use strict';

  var statusEl = document.getElementById('nh-status');
  function setStatus(key, value) {
    statusEl.setAttribute('data-' + key, String(value));
    document.documentElement.setAttribute('data-' + key, String(value));
  }
  function note(msg) {
    if (window.__nhNote) { window.__nhNote(msg); }
  }

  var data;
  try {
    data = JSON.parse(document.getElementById('nh-data').textContent);
  } catch (e) {
    note('page data: ' + e.message);
    setStatus('rendered', 'error');
    return;
  }
  var v = data.verdict || {};
  var grid = data.grid;

  // Cell states (grid.go) in order of severity: a row of several ranks shows
  // its worst.
  var STATES = 'nijokdxuc';
  var COLORS = { n: '#d43f3a', i: '#f0a02a', j: '#f0a02a', o: '#b35c1e', k: '#eba7a4', d: '#7a4bb0', x: '#f3f4f6', u: '#c5cad3', c: '#cfe7d4' };
  var NAMES = { n: 'NaN', i: '+Inf', j: '-Inf', o: 'overflow flag', k: 'read until the anomaly showed again', d: 'damaged', x: 'not dumped', u: 'not read', c: 'clean' };
  var ROLES = { s: 'born there', r: 'received', t: 'sent it on', h: 'came in unrecorded', f: 'flagged', w: 'seen' };
  var STATUS = { clean: 'clean', anomaly: 'the anomaly', recovered: 'did not last', checked: 'read only until the anomaly showed again', not_scanned: 'not read' };

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }

  function formatRanges(list) {
    var s = list.slice().sort(function (a, b) { return a - b; });
    var out = [];
    for (var i = 0; i < s.length;) {
      var j = i;
      while (j + 1 < s.length && s[j + 1] === s[j] + 1) { j++; }
      if (j === i) { out.push(String(s[i])); } else if (j === i + 1) { out.push(s[i] + ',' + s[j]); } else { out.push(s[i] + '-' + s[j]); }
      i = j + 1;
    }
    return out.join(',');
  }

  // a row label: the ranges when short, else the first two ranks, the
  // last and how many ("0,8,…,56: 8 ranks", never "0…56", which reads as
  // 57 ranks)
  function shortRanges(ranks) {
    var f = formatRanges(ranks);
    if (f.length <= 14) { return f; }
    var s = ranks.slice().sort(function (a, b) { return a - b; });
    return s[0] + ',' + s[1] + ',…,' + s[s.length - 1] + ': ' + s.length + ' ranks';
  }

  // first anomalous call of each rank at each step
  var firstAt = {};
  (v.steps || []).forEach(function (st) {
    var m = firstAt[st.step] = {};
    (st.anomalous || []).forEach(function (a) { m[a.rank] = a; });
  });
  if (!v.steps || !v.steps.length) {
    (v.candidates || []).forEach(function (c) {
      var m = firstAt[c.step] = firstAt[c.step] || {};
      if (!m[c.rank]) { m[c.rank] = { rank: c.rank, role: c.role, kind: c.kind, op: c.op, index: c.index, stage: c.stage }; }
    });
  }

  // ---- the op filter ------------------------------------------------------

  var filterEl = document.getElementById('nh-filter');
  var query = '';
  function applyFilter() {
    query = filterEl.value.trim().toLowerCase();
    var rows = document.querySelectorAll('table.filterable > tbody > tr');
    for (var i = 0; i < rows.length; i++) {
      var tr = rows[i];
      var op = tr.getAttribute('data-op');
      var hide = query !== '' && (op === null || op.toLowerCase().indexOf(query) < 0);
      tr.classList.toggle('filtered-out', hide);
    }
    if (chart) { draw(false); }
  }
  filterEl.addEventListener('input', applyFilter);
  // a link may carry a filter: page.html#filter=all_reduce
  function filterFromHash() {
    var m = /^#filter=(.*)$/.exec(window.location.hash);
    if (m) {
      filterEl.value = decodeURIComponent(m[1]);
      applyFilter();
    }
  }

  // ---- the propagation picture -------------------------------------------

  var chartEl = document.getElementById('nh-chart');
  var bucketEl = document.getElementById('nh-bucket');
  var detailEl = document.getElementById('nh-cell');
  var chart = null;
  var rows = [];
  var bucket = grid ? grid.bucket : 1;
  var MAX_VISIBLE_ROWS = 56;
  var MAX_VISIBLE_COLS = 48;
  var wideCols = false; // columns wide enough to name their collective

  function cellAt(col, i) { return col.cells.length === 1 ? col.cells : col.cells.charAt(i); }
  function roleAt(col, i) { return col.roles ? col.roles.charAt(i) : '.'; }

  function buildRows() {
    rows = [];
    grid.groups.forEach(function (g, gi) {
      for (var s = g.start; s < g.end; s += bucket) {
        var r = { group: gi, start: s, end: Math.min(s + bucket, g.end) };
        var ranks = grid.ranks.slice(r.start, r.end);
        r.label = ranks.length === 1 ? 'rank ' + ranks[0] : shortRanges(ranks);
        rows.push(r);
      }
    });
  }

  // summary of one cell: worst state, marker, counts, and whether a rank's
  // first anomalous call there matches the filter
  function summarise(ci, ri) {
    var col = grid.cols[ci], row = rows[ri];
    var counts = {}, worst = 'c', mark = 0, match = query === '';
    var first = firstAt[col.step] || {};
    for (var i = row.start; i < row.end; i++) {
      var c = cellAt(col, i), r = roleAt(col, i);
      counts[c] = (counts[c] || 0) + 1;
      if (STATES.indexOf(c) < STATES.indexOf(worst)) { worst = c; }
      if (r === 's') { mark = 2; } else if (r === 'r' && mark !== 2) { mark = 1; } else if (r === 't' && mark === 0) { mark = 3; }
      if (!match && (c === 'n' || c === 'i' || c === 'j' || c === 'o')) {
        var a = first[grid.ranks[i]];
        if (a && a.op && a.op.toLowerCase().indexOf(query) >= 0) { match = true; }
      }
    }
    return { worst: worst, mark: mark, counts: counts, match: match };
  }

  function items() {
    var out = [];
    for (var ci = 0; ci < grid.cols.length; ci++) {
      for (var ri = 0; ri < rows.length; ri++) {
        var s = summarise(ci, ri);
        out.push([ci, ri, STATES.indexOf(s.worst), s.mark, s.match ? 1 : 0]);
      }
    }
    return out;
  }

  function renderCell(params, api) {
    var p = api.coord([api.value(0), api.value(1)]);
    var size = api.size([1, 1]);
    var gap = size[0] > 5 && size[1] > 5 ? 1 : 0;
    var w = size[0] - gap, h = size[1] - gap;
    var x = p[0] - size[0] / 2 + gap / 2, y = p[1] - size[1] / 2 + gap / 2;
    var code = STATES.charAt(api.value(2));
    var mark = api.value(3);
        var opacity = api.value(4) === 0 ? 0.2 : 1;
    var children = [{
      type: 'rect',
      shape: { x: x, y: y, width: w, height: h },
      style: {
        fill: COLORS[code],
        stroke: mark === 2 ? '#111111' : (code === 'x' ? '#d0d5dd' : null),
        lineWidth: mark === 2 ? Math.max(1.5, Math.min(3, Math.min(w, h) / 6)) : 1,
        opacity: opacity
      }
    }];
    if (mark === 1) {
      var t = Math.max(4, Math.min(w, h) * 0.45);
      children.push({ type: 'polygon', shape: { points: [[x, y], [x + t, y], [x, y + t]] }, style: { fill: '#111111', opacity: opacity } });
    } else if (mark === 3) {
      // sent it on: the corner it leaves by, not the one it came in by
      var u = Math.max(4, Math.min(w, h) * 0.45);
      children.push({ type: 'polygon', shape: { points: [[x + w, y + h], [x + w - u, y + h], [x + w, y + h - u]] }, style: { fill: '#111111', opacity: opacity } });
    }
    return { type: 'group', children: children };
  }

  // outline of the carrier's column
  function renderBand(params, api) {
    var ci = api.value(0);
    var p = api.coord([ci, 0]);
    var size = api.size([1, 1]);
    var cs = params.coordSys;
    return {
      type: 'rect', silent: true,
      shape: { x: p[0] - size[0] / 2, y: cs.y - 1, width: size[0], height: cs.height + 2 },
      style: { fill: null, stroke: '#1b2230', lineWidth: 1.5, lineDash: [4, 3] }, z2: 10
    };
  }

  // a line above each process group but the first, and its label on the right
  function renderGroup(params, api) {
    var ri = api.value(1), gi = api.value(2);
    var cs = params.coordSys;
    var p = api.coord([0, ri]);
    var size = api.size([1, 1]);
    var top = p[1] - size[1] / 2;
    var children = [];
    if (ri > 0) {
      children.push({ type: 'line', shape: { x1: cs.x - 60, y1: top, x2: cs.x + cs.width + 4, y2: top }, style: { stroke: '#475467', lineWidth: 1 } });
    }
    var n = 0;
    for (var k = ri; k < rows.length && rows[k].group === gi; k++) { n++; }
    if (n * size[1] >= 12 && top >= cs.y - 1 && top < cs.y + cs.height) {
      children.push({ type: 'text', style: { x: cs.x + cs.width + 8, y: Math.max(top, cs.y) + 2, text: grid.groups[gi].label,
        fill: '#475467', font: '11px system-ui, sans-serif', textVerticalAlign: 'top' } });
    }
    return { type: 'group', children: children, silent: true };
  }

  function colTitle(col) {
    var s = 'step ' + col.step;
    if (col.phase === 'born') { s += ' · the birth'; }
    else if (col.phase === 'end') { s += ' · end of the step'; }
    else if (col.phase) { s += ' · after ' + col.op + (col.hops > 1 ? ' (' + col.hops + ' calls)' : ''); }
    return s;
  }

  function tooltip(p) {
    if (p.seriesId !== 'cells') { return ''; }
    var ci = p.value[0], ri = p.value[1];
    var col = grid.cols[ci], row = rows[ri];
    var s = summarise(ci, ri);
    var lines = ['<b>' + esc(colTitle(col)) + '</b>' + (col.carrier ? ' <i>(carrier)</i>' : ''),
      esc(row.label) + (grid.groups.length > 1 ? ' <span style="color:#667085">(' + esc(grid.groups[row.group].label) + ')</span>' : '')];
    var parts = [];
    for (var k = 0; k < STATES.length; k++) {
      var c = STATES.charAt(k);
      if (s.counts[c]) { parts.push((row.end - row.start > 1 ? s.counts[c] + ' ' : '') + NAMES[c]); }
    }
    lines.push(parts.join(' · '));
    if (s.mark === 2) { lines.push('<b>born there</b>'); } else if (s.mark === 1) { lines.push('received through a collective'); } else if (s.mark === 3) { lines.push('sent it on through this call'); }
    if (row.end - row.start === 1) {
      var a = (firstAt[col.step] || {})[grid.ranks[row.start]];
      if (a && STATES.indexOf(cellAt(col, row.start)) < 4) { lines.push('<code>' + esc(a.op) + '</code> #' + a.index); }
    }
    lines.push('<span style="color:#667085">' + esc(STATUS[col.status] || col.status) + '</span>');
    return lines.join('<br>');
  }

  function option() {
    var visibleRows = Math.min(rows.length, MAX_VISIBLE_ROWS);
    var cellH = Math.max(12, Math.min(26, Math.floor(560 / Math.max(visibleRows, 1))));
    var zoomX = grid.cols.length > MAX_VISIBLE_COLS;
    var zoomY = rows.length > MAX_VISIBLE_ROWS;
    var grouped = grid.groups.length > 1;
    var top = 56, bottom = zoomX ? 44 : 12;
    chartEl.style.height = (top + bottom + visibleRows * cellH) + 'px';
    var labelW = 0;
    rows.forEach(function (r) { labelW = Math.max(labelW, r.label.length); });
    var left = Math.min(220, 16 + labelW * 7);
    var right = (grouped ? 150 : 16) + (zoomY ? 28 : 0);
    wideCols = (chartEl.clientWidth - left - right) / Math.min(grid.cols.length, MAX_VISIBLE_COLS) >= 96;

    var bands = [];
    grid.cols.forEach(function (c, i) { if (c.carrier) { bands.push([i, 0]); } });
    var groupMarks = [];
    if (grouped) {
      rows.forEach(function (r, i) { if (i === 0 || rows[i - 1].group !== r.group) { groupMarks.push([0, i, r.group]); } });
    }
    var dz = [];
    if (zoomY) {
      dz.push({ type: 'slider', yAxisIndex: 0, right: 6, width: 14, top: top, bottom: bottom, startValue: 0, endValue: visibleRows - 1,
        filterMode: 'weakFilter', showDetail: false, brushSelect: false, zoomLock: false, handleSize: '90%' });
      dz.push({ type: 'inside', yAxisIndex: 0, zoomOnMouseWheel: false, moveOnMouseWheel: true, moveOnMouseMove: false, filterMode: 'weakFilter' });
    }
    if (zoomX) {
      var end = Math.min(grid.cols.length - 1, lastOriginCol() + 4);
      dz.push({ type: 'slider', xAxisIndex: 0, bottom: 8, height: 16, startValue: Math.max(0, end - MAX_VISIBLE_COLS + 1), endValue: end,
        filterMode: 'weakFilter', showDetail: false, brushSelect: false });
      dz.push({ type: 'inside', xAxisIndex: 0, zoomOnMouseWheel: 'shift', moveOnMouseWheel: false, moveOnMouseMove: false, filterMode: 'weakFilter' });
    }
    return {
      animation: false,
      textStyle: { fontFamily: 'system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif' },
      grid: { left: left, right: right, top: top, bottom: bottom, containLabel: false },
      tooltip: { trigger: 'item', confine: true, formatter: tooltip, borderColor: '#dde1e7', textStyle: { fontSize: 12, color: '#1c2330' }, extraCssText: 'box-shadow:0 2px 8px rgba(0,0,0,.12);max-width:420px;white-space:normal;' },
      xAxis: [{
        type: 'category', position: 'top', data: grid.cols.map(function (c) { return c.label; }), triggerEvent: true,
        axisTick: { show: false }, axisLine: { show: false }, splitLine: { show: false },
        axisLabel: {
          interval: function (i) { return labelled[i]; },
          hideOverlap: false, margin: 6,
          formatter: function (value) {
            var c = colByLabel[value];
            if (!c) { return value; }
            var style = c.origin ? 'o' : (c.status === 'recovered' ? 'r' : 's');
            var top = c.phase && c.phase !== 'born' ? ' ' : String(c.step);
            var mark = c.phase ? phaseMark(c) : (c.status === 'recovered' && wideCols ? 'did not last' : ' ');
            if (c.hop && wideCols) { mark += ' ' + (c.phase.length > 16 ? c.phase.slice(0, 15) + '…' : c.phase); }
            return '{' + style + '|' + top + '}\n{p|' + mark + '}';
          },
          rich: {
            s: { fontSize: 12, color: '#344054', lineHeight: 16 },
            o: { fontSize: 12, color: '#a42b25', fontWeight: 'bold', lineHeight: 16 },
            r: { fontSize: 12, color: '#8a5a12', lineHeight: 16 },
            p: { fontSize: 11, color: '#667085', lineHeight: 14 }
          }
        },
        name: 'step', nameLocation: 'start', nameGap: 10, nameTextStyle: { color: '#667085', fontSize: 11, align: 'right', verticalAlign: 'bottom', padding: [0, 0, 18, 0] }
      },
        // the process group marks sit on an axis of their own, which no zoom
        // filters
        { type: 'category', data: ['groups'], show: false }
      ],
      yAxis: {
        type: 'category', inverse: true, data: rows.map(function (r) { return r.label; }),
        axisTick: { show: false }, axisLine: { show: false }, splitLine: { show: false },
        axisLabel: { fontSize: 11, color: '#344054', fontFamily: 'ui-monospace, Menlo, Consolas, monospace', interval: 'auto', hideOverlap: true }
      },
      dataZoom: dz,
      series: [
        { id: 'cells', type: 'custom', renderItem: renderCell,
          data: items(), encode: { x: 0, y: 1 }, clip: true, progressive: 0, animation: false },
        { id: 'bands', type: 'custom', renderItem: renderBand, data: bands, encode: { x: 0, y: 1 }, silent: true, z: 5, animation: false, tooltip: { show: false } },
        { id: 'groups', type: 'custom', renderItem: renderGroup, data: groupMarks, encode: { x: 0, y: 1 }, xAxisIndex: 1, silent: true, z: 6, clip: false, animation: false, tooltip: { show: false } }
      ]
    };
  }

  // the second line of a column's label: the birth, the collectives of the
  // origin step by their number (listed under the picture), the end
  function phaseMark(c) {
    if (c.phase === 'born' || c.phase === 'end') { return c.phase; }
    var n = c.hop || 0;
    return n >= 1 && n <= 20 ? String.fromCharCode(0x2460 + n - 1) : '#' + n;
  }
  var labelled = [];
  function planLabels() {
    var cols = (grid && grid.cols) || [];
    // every column when they fit; else every k-th step, kept clear of the
    // origin step, whose columns are always labelled
    var k = Math.max(1, Math.ceil(Math.min(cols.length, MAX_VISIBLE_COLS) / 24));
    labelled = cols.map(function (c, i) {
      if (c.origin || c.status === 'recovered' || k === 1) { return true; }
      for (var j = Math.max(0, i - k + 1); j < Math.min(cols.length, i + k); j++) {
        if (cols[j].origin || cols[j].status === 'recovered') { return false; }
      }
      return i % k === 0;
    });
  }
  planLabels();

  var colByLabel = {};
  ((grid && grid.cols) || []).forEach(function (c) { colByLabel[c.label] = c; });

  function lastOriginCol() {
    for (var i = grid.cols.length - 1; i >= 0; i--) { if (grid.cols[i].origin) { return i; } }
    return grid.cols.length - 1;
  }

  function draw(fresh) {
    if (fresh) { buildRows(); }
    chart.setOption(option(), true);
    chart.resize();
    setStatus('rows', rows.length);
    setStatus('cols', grid.cols.length);
  }

  function showCell(ci, ri) {
    var row = rows[ri];
    if (row) { showRanks(ci, [row], row.label); }
  }

  // the ranks of the given rows in one column: their first anomalous calls
  // at its step, and the others by state
  function showRanks(ci, rs, label) {
    var col = grid.cols[ci];
    if (!col || !rs.length) { return; }
    var first = firstAt[col.step] || {};
    var list = [];
    var quiet = {};
    rs.forEach(function (row) {
      for (var i = row.start; i < row.end; i++) {
        var c = cellAt(col, i), rank = grid.ranks[i];
        var a = first[rank];
        if (STATES.indexOf(c) < 4 || a) {
          list.push({ rank: rank, state: c, role: roleAt(col, i), a: a });
        } else {
          (quiet[c] = quiet[c] || []).push(rank);
        }
      }
    });
    var html = '<h4>' + esc(colTitle(col)) + ' — ' + esc(label) + '</h4>';
    if (list.length) {
      html += '<table class="detail-table"><thead><tr><th>rank</th><th>in this column</th><th>first anomalous call at step ' + col.step +
        '</th><th class="num">#</th><th>stage</th><th>kind</th><th>role</th><th>via</th></tr></thead><tbody>';
      list.slice(0, 64).forEach(function (e) {
        var a = e.a || {};
        html += '<tr><td>' + e.rank + '</td><td>' + esc(NAMES[e.state]) + (ROLES[e.role] ? ' (' + esc(ROLES[e.role]) + ')' : '') + '</td><td>' +
          (a.op ? '<code>' + esc(a.op) + '</code>' : '') + '</td><td class="num">' + (a.op ? a.index : '') + '</td><td>' + esc(a.stage || '') +
          '</td><td>' + esc(a.kind || '') + '</td><td>' + esc(a.role || '') + '</td><td>' + (a.via ? '<code>' + esc(a.via) + '</code>' : '') + '</td></tr>';
      });
      html += '</tbody></table>';
      if (list.length > 64) { html += '<p class="muted small">… ' + (list.length - 64) + ' more ranks</p>'; }
    }
    var q = [];
    for (var k = 0; k < STATES.length; k++) {
      var s = STATES.charAt(k);
      if (quiet[s]) { q.push(NAMES[s] + ': ' + (quiet[s].length === 1 ? 'rank ' : 'ranks ') + formatRanges(quiet[s])); }
    }
    if (q.length) { html += '<p class="muted small">' + esc(q.join('; ')) + '</p>'; }
    detailEl.innerHTML = html;
  }

  // the collectives of the origin step, by the numbers of their columns
  function describeHops() {
    var parts = [];
    grid.cols.forEach(function (c) {
      if (c.origin && c.op) {
        parts.push('<span class="hop"><b>' + phaseMark(c) + '</b> <code>' + esc(c.op) + '</code>' +
          (c.hops > 1 ? ' ×' + c.hops : '') + (c.carrier ? ' <span class="tag tag-carrier">carrier</span>' : '') + '</span>');
      }
    });
    var el = document.getElementById('nh-hops');
    if (parts.length && el) {
      // the legend of the numbered columns names each call in full
      var step = grid.cols.filter(function (c) { return c.origin; })[0].step;
      el.innerHTML = 'Inside step ' + step + ', after its birth: ' + parts.join(' ');
      el.hidden = false;
    }
  }

  // the birth: the first column of the origin step and every row that
  // holds a source rank (all of them in a tie)
  function originCell() {
    for (var ci = 0; ci < grid.cols.length; ci++) {
      var col = grid.cols[ci];
      if (!col.origin) { continue; }
      var rs = [], ranks = [];
      rows.forEach(function (row) {
        var has = false;
        for (var i = row.start; i < row.end; i++) {
          if (roleAt(col, i) === 's') { has = true; ranks.push(grid.ranks[i]); }
        }
        if (has) { rs.push(row); }
      });
      return rs.length ? { col: ci, rows: rs, label: (ranks.length === 1 ? 'rank ' : 'source ranks ') + formatRanges(ranks) } : null;
    }
    return null;
  }

  // count the pixels the picture painted, for the page's own status
  function paintedPixels() {
    var canvas = chartEl.querySelector('canvas');
    if (!canvas || !canvas.width || !canvas.height) { return 0; }
    var ctx = canvas.getContext('2d');
    var d = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
    var n = 0;
    for (var i = 0; i < d.length; i += 4) {
      if (d[i + 3] > 0 && (d[i] < 240 || d[i + 1] < 240 || d[i + 2] < 240)) { n++; }
    }
    return n;
  }

  function setupBuckets() {
    var largest = 1;
    grid.groups.forEach(function (g) { largest = Math.max(largest, g.end - g.start); });
    var opts = [];
    for (var b = 1; b < largest * 2 && b <= 4096; b *= 2) { opts.push(b); if (b >= largest) { break; } }
    if (opts.indexOf(bucket) < 0) { opts.push(bucket); }
    bucketEl.innerHTML = opts.map(function (b) {
      return '<option value="' + b + '"' + (b === bucket ? ' selected' : '') + '>' + b + '</option>';
    }).join('');
    bucketEl.disabled = opts.length < 2;
    bucketEl.addEventListener('change', function () {
      bucket = parseInt(bucketEl.value, 10) || 1;
      draw(true);
    });
  }

  function start() {
    if (!chartEl || !grid || !grid.cols || !grid.cols.length || !grid.ranks.length) {
      // no steps to draw: the page has no picture
      setStatus('chart-pixels', 0);
      setStatus('rendered', 'ok');
      return;
    }
    if (!window.echarts) {
      note('the chart library did not load');
      setStatus('rendered', 'error');
      return;
    }
    setupBuckets();
    describeHops();
    buildRows();
    chart = window.echarts.init(chartEl, null, { renderer: 'canvas' });
    // a handle for the browser's console (and the page's tests)
    window.nanhunt = { chart: chart, grid: grid, rows: function () { return rows; } };
    draw(false);
    chart.on('click', function (p) {
      if (p.seriesId === 'cells' && p.value) { showCell(p.value[0], p.value[1]); }
    });
    // a column label cut to fit says its whole name on hover
    chart.on('mouseover', function (p) {
      if (p.componentType === 'xAxis' && colByLabel[p.value]) { chartEl.title = colTitle(colByLabel[p.value]); }
    });
    chart.on('mouseout', function (p) {
      if (p.componentType === 'xAxis') { chartEl.title = ''; }
    });
    window.addEventListener('resize', function () { chart.resize(); });
    var oc = originCell();
    if (oc) { showRanks(oc.col, oc.rows, oc.label); }
    setStatus('chart-pixels', paintedPixels());
    setStatus('rendered', 'ok');
  }

  try {
    start();
    filterFromHash();
    window.addEventListener('hashchange', filterFromHash);
    setStatus('filtered', document.querySelectorAll('.filtered-out').length);
  } catch (e) {
    note('render: ' + (e && e.stack || e));
    setStatus('rendered', 'error');
  }
})();
