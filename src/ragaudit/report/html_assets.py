"""The inline CSS and JavaScript of the HTML report (no external resource of any kind).

The script reads the case data from ``<script type="application/json" id="ragaudit-data">`` and builds
the per-query table: sortable columns, a search box, a status filter and a drill-down row per case;
it lists 300 matching rows at a time (a button shows more), so large datasets stay quick.
It creates every node with ``createElement`` / ``textContent`` and never parses data as HTML, so corpus
and user content always shows as text.
"""

from __future__ import annotations

CSS = """
:root { --fg:#0f172a; --muted:#64748b; --line:#e2e8f0; --bg:#f8fafc; --card:#fff; --accent:#2563eb;
  --good:#15803d; --bad:#b91c1c; --warn:#b45309; --good-bg:#dcfce7; --bad-bg:#fee2e2; --base:#f59e0b; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;
  color:var(--fg); background:var(--bg); }
header { background:#0f172a; color:#f8fafc; padding:22px 32px 18px; }
header .brand { font-size:12px; letter-spacing:.12em; text-transform:uppercase; color:#93c5fd; }
header h1 { margin:4px 0 4px; font-size:24px; font-weight:650; overflow-wrap:anywhere; }
header .sub { color:#cbd5e1; font-size:13px; overflow-wrap:anywhere; }
nav { margin-top:12px; display:flex; flex-wrap:wrap; gap:4px 16px; }
nav a { color:#93c5fd; text-decoration:none; font-size:13px; }
nav a:hover { color:#fff; text-decoration:underline; }
main { max-width:1320px; margin:0 auto; padding:8px 32px 48px; }
section { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:18px 22px;
  margin:18px 0; }
h2 { font-size:17px; margin:0 0 10px; }
h3 { font-size:14px; margin:14px 0 6px; }
p.hint, .hint { color:var(--muted); font-size:12.5px; margin:4px 0 10px; }
.cards { display:grid; grid-template-columns:repeat(auto-fit,minmax(130px,1fr)); gap:12px; }
.card { border:1px solid var(--line); border-radius:8px; padding:10px 14px; background:#fff; }
.card .k { color:var(--muted); font-size:12px; }
.card .v { font-size:22px; font-weight:650; font-variant-numeric:tabular-nums; }
.card.bad { border-color:#fca5a5; background:var(--bad-bg); } .card.bad .v { color:var(--bad); }
.card.good .v { color:var(--good); } .card.warn { border-color:#fcd34d; background:#fef3c7; }
.card.warn .v { color:var(--warn); }
.badge { display:inline-block; padding:3px 10px; border-radius:999px; font-weight:650; font-size:13px; }
.badge.pass { background:var(--good-bg); color:var(--good); } .badge.fail { background:var(--bad-bg); color:var(--bad); }
.badge.warn { background:#fef3c7; color:var(--warn); }
.badge.small { font-size:11.5px; padding:1px 8px; white-space:nowrap; }
p.advice { font-size:17px; font-weight:600; margin:2px 0 8px; }
.winner { font-weight:700; } tr.win td { background:#eff6ff; } .ns { color:var(--muted); font-size:11.5px; }
table.ranking th { white-space:normal; vertical-align:bottom; } table.ranking td { vertical-align:middle; }
.nowrap { white-space:nowrap; } table.ranking td.build { min-width:9em; } table.ranking td.name { white-space:nowrap; }
table.ranking .hint { margin:0; font-size:11.5px; }
table { border-collapse:collapse; width:100%; font-size:12.5px; }
th, td { text-align:left; padding:6px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
th { background:#f1f5f9; font-weight:600; white-space:nowrap; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
.up { color:var(--good); fill:var(--good); } .down { color:var(--bad); fill:var(--bad); }
.sig { font-weight:700; }
.kv th { width:140px; background:none; color:var(--muted); font-weight:500; }
.kv td { word-break:break-all; }
.toolbar { display:flex; gap:10px; align-items:center; margin:6px 0 10px; flex-wrap:wrap; }
.toolbar input { flex:1; min-width:240px; padding:7px 10px; border:1px solid #cbd5e1; border-radius:6px; font:inherit; }
.toolbar select { padding:6px 8px; border:1px solid #cbd5e1; border-radius:6px; font:inherit; background:#fff; }
#shown { color:var(--muted); font-size:12.5px; }
.tablewrap { max-height:760px; overflow:auto; border:1px solid var(--line); border-radius:8px; }
.docwrap { overflow-x:auto; }
#cases thead th { position:sticky; top:0; z-index:2; cursor:pointer; user-select:none; }
#cases thead th[aria-sort=ascending]::after { content:" ▲"; color:var(--accent); }
#cases thead th[aria-sort=descending]::after { content:" ▼"; color:var(--accent); }
#cases tbody tr.case { cursor:pointer; } #cases tbody tr.case:hover { background:#eff6ff; }
#cases tbody tr.case.open { background:#dbeafe; }
#cases tr.case td:first-child { white-space:nowrap; }
#cases td.q { max-width:0; width:40%; overflow:hidden; text-overflow:ellipsis; white-space:nowrap; }
#cases td.num { white-space:nowrap; }
tr.detail > td { background:#f8fafc; padding:12px 16px 16px; }
.detail .query { font-size:15px; margin:0 0 6px; white-space:pre-wrap; }
.detail .meta { color:var(--muted); font-size:12.5px; margin-bottom:8px; }
.detail table { background:#fff; border:1px solid var(--line); }
.detail .cols { display:grid; grid-template-columns:minmax(0,1.3fr) minmax(0,1fr); gap:18px; }
.detail td, .detail th { padding:4px 7px; }
tr.rel td { background:#f0fdf4; } tr.leak td { background:var(--bad-bg); color:var(--bad); }
.pill { display:inline-block; padding:0 7px; border-radius:999px; font-size:11.5px; background:#e2e8f0; color:#334155; }
.pill.ok { background:var(--good-bg); color:var(--good); } .pill.error, .pill.missing { background:var(--bad-bg); color:var(--bad); }
.pill.unanswerable { background:#fef3c7; color:var(--warn); } .pill.leak { background:var(--bad); color:#fff; }
ul.ids { margin:4px 0; padding-left:18px; } ul.ids li { word-break:break-all; }
.ok-line { color:var(--good); font-weight:600; } .bad-line { color:var(--bad); font-weight:600; }
.warn-line { color:var(--warn); font-weight:600; }
.chart { max-width:100%; height:auto; display:block; }
.chart text { font:12px system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif; fill:var(--fg); }
.chart .tick, .chart .legend { fill:var(--muted); font-size:11px; } .chart .legend { fill:var(--fg); }
.chart .value { font-variant-numeric:tabular-nums; font-weight:600; }
.chart .note { fill:var(--muted); } .chart .note.up { fill:var(--good); font-weight:600; }
.chart .note.down { fill:var(--bad); font-weight:600; }
.chart .grid { stroke:var(--line); } .chart .axis { stroke:#94a3b8; }
.chart rect.bar { fill:#93c5fd; } .chart circle.bar { fill:#1d4ed8; } .chart .ci line { stroke:#1e3a8a; stroke-width:1.6; }
.chart line.base { stroke:var(--base); stroke-width:3; } .chart line.zero { stroke:#334155; stroke-dasharray:4 3; }
.chart .pt { stroke:#94a3b8; fill:#94a3b8; stroke-width:2; } .chart .pt.hi { stroke:var(--accent); fill:var(--accent); }
.chart line.marker { stroke:var(--bad); stroke-dasharray:5 3; stroke-width:1.5; } .chart .mlabel { fill:var(--bad); font-size:11px; }
.chart polyline.line { fill:none; stroke-width:2.2; }
.chart rect.bar.over { fill:#fca5a5; } .chart .over { fill:var(--bad); } .chart .axisnote { font-style:italic; }
.chart circle.ring { fill:none; stroke:var(--fg); stroke-width:2; }
.chart path.axisbreak { stroke:var(--fg); stroke-width:1.5; fill:none; }
.chart .s0 { fill:#2563eb; stroke:#2563eb; } .chart .s1 { fill:#f59e0b; stroke:#f59e0b; }
.chart .s2 { fill:#10b981; stroke:#10b981; } .chart .s3 { fill:#ef4444; stroke:#ef4444; }
.chart .s4 { fill:#8b5cf6; stroke:#8b5cf6; } .chart .s5 { fill:#0891b2; stroke:#0891b2; }
.chart polyline.s0, .chart polyline.s1, .chart polyline.s2, .chart polyline.s3, .chart polyline.s4,
.chart polyline.s5 { fill:none; }
.legendline { font-size:12px; color:var(--muted); margin-top:6px; }
.legendline i { display:inline-block; width:18px; height:9px; vertical-align:middle; margin:0 4px 0 12px; border-radius:2px; }
button#more { margin:10px 0 0; padding:6px 14px; border:1px solid #cbd5e1; border-radius:6px; background:#fff;
  font:inherit; cursor:pointer; } button#more:hover { border-color:var(--accent); color:var(--accent); }
/* phones and narrow windows: table rows become cards (each cell labelled), nothing is cut off */
@media (max-width: 720px) {
  header { padding:16px 16px 12px; } main { padding:4px 10px 32px; } section { padding:14px 12px; }
  .tablewrap { max-height:none; overflow:visible; border:none; }
  table.stack, table.stack > thead, table.stack > tbody { display:block; width:auto; }
  table.stack > thead > tr { display:flex; flex-wrap:wrap; gap:4px; }
  table.stack > thead > tr > th { position:static; border:1px solid var(--line); border-radius:6px; padding:3px 8px; }
  table.ranking > thead { display:none; }
  table.stack > tbody > tr.case, table.ranking > tbody > tr { display:grid; grid-template-columns:repeat(2, minmax(0, 1fr));
    column-gap:10px; border:1px solid var(--line); border-radius:8px; margin:8px 0; padding:6px 8px; }
  table.stack > tbody > tr > td { display:block; border:none; padding:2px 0; text-align:left; max-width:none;
    width:auto; white-space:normal; overflow-wrap:anywhere; }
  table.stack > tbody > tr > td[data-label]::before { content:attr(data-label) ": "; color:var(--muted); font-size:11.5px; }
  table.stack > tbody > tr > td.wide, #cases td.q, #cases tr.case td:first-child { grid-column:1 / -1; }
  #cases tr.case td:first-child { font-weight:650; }
  #cases tr.detail { display:block; padding:0; } #cases tr.detail > td { display:block; padding:8px; }
  .detail .cols { grid-template-columns:minmax(0, 1fr); } .detail .cols > * { min-width:0; }
  tr.detail .meta, tr.detail p, tr.detail li, tr.detail h3 { overflow-wrap:anywhere; min-width:0; }
  #cases td.q { max-width:none; width:auto; white-space:normal; }
  .detail table { display:block; overflow-x:auto; } .detail table td { overflow-wrap:normal; }
  .toolbar input { min-width:0; }
  section table:not(.stack) { display:block; overflow-x:auto; } /* secondary tables scroll inside */
  /* a document's tables become cards: every cell says which column it is, the first names the row */
  table.rowcards > thead { display:none; }
  table.rowcards > tbody > tr { display:grid; grid-template-columns:repeat(2, minmax(0, 1fr)); column-gap:10px;
    border:1px solid var(--line); border-radius:8px; margin:8px 0; padding:6px 8px; }
  table.rowcards > tbody > tr > td:first-child { grid-column:1 / -1; font-weight:650; }
  table.ranking > tbody > tr > td:nth-child(2) { grid-column:1 / -1; }
  table.rowcards > tbody > tr.win { background:#eff6ff; } table.rowcards > tbody > tr.win > td { background:none; }
  /* charts keep a readable size and scroll inside their own box: 560 px of a 1040-unit chart and
     19-unit text read 10 px on screen (at 358 px they would read 4 px) */
  .chartbox { overflow-x:auto; }
  .chart { min-width:560px; }
  .chart text { font-size:19px; } .chart .tick, .chart .legend, .chart .mlabel { font-size:18px; }
  .kv th { width:auto; }
}
footer { color:var(--muted); font-size:12px; text-align:center; padding:10px; }
"""

JS = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("ragaudit-data").textContent);
  var body = document.querySelector("#cases tbody");
  if (!body) { return; }
  var search = document.getElementById("search");
  var statusFilter = document.getElementById("status");
  var shown = document.getElementById("shown");
  var cases = data.cases;
  var columns = data.columns;
  var more = document.getElementById("more");
  var PAGE = 300;
  var limit = PAGE;
  var sortKey = null, sortDir = 1;
  var openIds = new Set();

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) { node.className = cls; }
    if (text !== undefined && text !== null) { node.textContent = String(text); }
    return node;
  }
  function fmt(v, digits) {
    return (typeof v === "number" && isFinite(v)) ? v.toFixed(digits === undefined ? 4 : digits) : "–";
  }
  function signed(v, digits) {
    if (typeof v !== "number" || !isFinite(v)) { return "–"; }
    return (v > 0 ? "+" : "") + v.toFixed(digits === undefined ? 4 : digits);
  }
  function tone(v) { return (typeof v === "number" && v > 1e-12) ? "up" : ((typeof v === "number" && v < -1e-12) ? "down" : ""); }
  function value(c, col) {
    if (col.kind === "metric") { return c.metrics[col.key]; }
    if (col.kind === "delta") { return c.changes ? c.changes.deltas[col.key] : undefined; }
    return c[col.key];
  }
  function haystack(c) {
    if (c._hay === undefined) {
      var parts = [c.id, c.query || "", c.tenant_id || "", c.status || "", c.error || ""];
      c.retrieved.forEach(function (r) { parts.push(r.chunk_id); });
      c._hay = parts.join("\n").toLowerCase();
    }
    return c._hay;
  }
  function matches(c) {
    var q = search.value.trim().toLowerCase();
    var s = statusFilter.value;
    if (q && haystack(c).indexOf(q) < 0) { return false; }
    if (s === "all") { return true; }
    if (s === "leaks") { return c.leaks.length > 0; }
    if (s === "worse" || s === "better") {
      var d = c.changes ? c.changes.deltas[data.primary] : undefined;
      return typeof d === "number" && (s === "worse" ? d < -1e-12 : d > 1e-12);
    }
    return c.status === s;
  }
  function compare(a, b) {
    var col = columns[sortKey];
    var x = value(a, col), y = value(b, col);
    var xm = (x === undefined || x === null), ym = (y === undefined || y === null);
    if (xm || ym) { return xm && ym ? 0 : (xm ? 1 : -1); }
    if (typeof x === "number" && typeof y === "number") { return sortDir * (x - y); }
    return sortDir * String(x).localeCompare(String(y), undefined, {numeric: true});
  }

  function retrievedTable(c) {
    var leaked = new Set(c.leaks.map(function (l) { return l.chunk_id; }));
    var t = el("table", "retrieved");
    var head = el("tr");
    [["rank", "num"], ["chunk", ""], ["grade", "num"], ["relevant", "num"], ["tenant", ""], ["score", "num"]]
      .forEach(function (h) { head.appendChild(el("th", h[1], h[0])); });
    t.appendChild(el("thead")).appendChild(head);
    var tb = t.appendChild(el("tbody"));
    if (!c.retrieved.length) {
      var empty = el("td", "hint", "nothing retrieved");
      empty.colSpan = 6;
      tb.appendChild(el("tr")).appendChild(empty);
    }
    c.retrieved.forEach(function (r, i) {
      var tr = el("tr", leaked.has(r.chunk_id) ? "leak" : (r.relevant ? "rel" : ""));
      tr.appendChild(el("td", "num", i + 1));
      var id = el("td", "", r.chunk_id);
      if (leaked.has(r.chunk_id)) { id.appendChild(document.createTextNode(" ")); id.appendChild(el("span", "pill leak", "LEAK")); }
      tr.appendChild(id);
      tr.appendChild(el("td", "num", r.grade === null || r.grade === undefined ? "–" : r.grade));
      tr.appendChild(el("td", "num", r.relevant ? "✓" : ""));
      tr.appendChild(el("td", "", r.tenant_id || "–"));
      tr.appendChild(el("td", "num", fmt(r.score, 4)));
      tb.appendChild(tr);
    });
    return t;
  }

  function changesBlock(c) {
    var box = el("div");
    box.appendChild(el("h3", "", "Against the baseline (" + data.baseline + ")"));
    if (!c.changes) { box.appendChild(el("p", "hint", "not in the baseline report")); return box; }
    var t = el("table");
    var h = el("tr");
    ["metric", "baseline", "now", "Δ"].forEach(function (x, i) { h.appendChild(el("th", i ? "num" : "", x)); });
    t.appendChild(el("thead")).appendChild(h);
    var tb = t.appendChild(el("tbody"));
    Object.keys(c.changes.deltas).forEach(function (m) {
      var d = c.changes.deltas[m], now = c.metrics[m];
      var tr = el("tr");
      tr.appendChild(el("td", "", m));
      tr.appendChild(el("td", "num", fmt(now - d)));
      tr.appendChild(el("td", "num", fmt(now)));
      tr.appendChild(el("td", "num " + tone(d), signed(d)));
      tb.appendChild(tr);
    });
    box.appendChild(t);
    if (c.changes.status_before && c.changes.status_before !== c.status) {
      box.appendChild(el("p", "hint", "status was " + c.changes.status_before));
    }
    [["entered", "new in the list"], ["left", "dropped from the list"]].forEach(function (pair) {
      var ids = c.changes[pair[0]];
      if (!ids.length) { return; }
      box.appendChild(el("h3", "", pair[1] + " (" + ids.length + ")"));
      var ul = box.appendChild(el("ul", "ids"));
      ids.forEach(function (id) { ul.appendChild(el("li", "", id)); });
    });
    if (c.changes.moves.length) {
      box.appendChild(el("h3", "", "judged chunks that moved"));
      var ul2 = box.appendChild(el("ul", "ids"));
      c.changes.moves.forEach(function (m) {
        var before = m.before === null ? "absent" : "rank " + m.before;
        var now = m.now === null ? "absent" : "rank " + m.now;
        ul2.appendChild(el("li", "", m.chunk_id + ": " + before + " → " + now));
      });
    }
    return box;
  }

  function detailRow(c) {
    var tr = el("tr", "detail");
    var td = el("td");
    td.colSpan = columns.length;
    tr.appendChild(td);
    td.appendChild(el("p", "query", c.query || "(query text not in the report: pass --dataset)"));
    var meta = "case " + c.id + " · tenant " + (c.tenant_id || "–") + " · status " + c.status;
    if (typeof c.latency_ms === "number") { meta += " · " + c.latency_ms.toFixed(1) + " ms"; }
    td.appendChild(el("div", "meta", meta));
    if (c.error) { td.appendChild(el("p", "bad-line", "error: " + c.error)); }
    if (c.leaks.length) {
      td.appendChild(el("p", "bad-line", c.leaks.length + " chunk(s) from another tenant returned"));
    }
    var cols = td.appendChild(el("div", data.hasBaseline ? "cols" : ""));
    var left = cols.appendChild(el("div"));
    var total = c.retrieved_total > c.retrieved.length ? "first " + c.retrieved.length + " of " + c.retrieved_total : c.retrieved.length;
    left.appendChild(el("h3", "", "Retrieved (" + total + ")"));
    left.appendChild(retrievedTable(c));
    if (data.hasBaseline) { cols.appendChild(changesBlock(c)); }
    return tr;
  }

  function caseRow(c) {
    var tr = el("tr", "case" + (openIds.has(c.id) ? " open" : ""));
    tr.tabIndex = 0;
    tr.dataset.id = c.id;
    tr.setAttribute("aria-expanded", openIds.has(c.id) ? "true" : "false");
    columns.forEach(function (col) {
      var v = value(c, col);
      var td;
      if (col.kind === "metric") { td = el("td", "num", fmt(v, 3)); }
      else if (col.kind === "delta") { td = el("td", "num " + tone(v), signed(v, 3)); }
      else if (col.key === "latency_ms") { td = el("td", "num", fmt(v, 1)); }
      else if (col.key === "status") {
        td = el("td");
        td.appendChild(el("span", "pill " + c.status, c.status));
        if (c.leaks.length) { td.appendChild(document.createTextNode(" ")); td.appendChild(el("span", "pill leak", c.leaks.length + " leak")); }
      }
      else if (col.key === "query") { td = el("td", "q", v || "–"); td.title = v || ""; }
      else { td = el("td", "", v === null || v === undefined ? "–" : v); }
      if (col.key !== "id") { td.setAttribute("data-label", col.label); }
      tr.appendChild(td);
    });
    return tr;
  }

  function render() {
    var rows = cases.filter(matches);
    if (sortKey !== null) { rows.sort(compare); }
    var frag = document.createDocumentFragment();
    rows.slice(0, limit).forEach(function (c) {
      frag.appendChild(caseRow(c));
      if (openIds.has(c.id)) { frag.appendChild(detailRow(c)); }
    });
    body.textContent = "";
    body.appendChild(frag);
    var listed = Math.min(rows.length, limit);
    shown.textContent = listed < rows.length
      ? "showing " + listed + " of " + rows.length + " matching (" + cases.length + " queries)"
      : "showing " + rows.length + " of " + cases.length + " queries";
    more.hidden = listed >= rows.length;
    more.textContent = "show " + Math.min(PAGE, rows.length - listed) + " more";
  }
  function restart() { limit = PAGE; render(); }

  function toggle(tr) {
    var id = tr.dataset.id;
    if (openIds.has(id)) { openIds.delete(id); } else { openIds.add(id); }
    render();
  }

  body.addEventListener("click", function (ev) {
    var tr = ev.target.closest("tr.case");
    if (tr) { toggle(tr); }
  });
  body.addEventListener("keydown", function (ev) {
    var tr = ev.target.closest("tr.case");
    if (tr && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); toggle(tr); }
  });
  document.querySelectorAll("#cases thead th").forEach(function (th, i) {
    th.addEventListener("click", function () {
      if (sortKey === i) { sortDir = -sortDir; } else { sortKey = i; sortDir = 1; }
      document.querySelectorAll("#cases thead th").forEach(function (o) { o.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", sortDir > 0 ? "ascending" : "descending");
      restart();
    });
  });
  search.addEventListener("input", restart);
  statusFilter.addEventListener("change", restart);
  more.addEventListener("click", function () { limit += PAGE; render(); });
  render();
})();
"""
