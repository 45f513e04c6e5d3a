"""The HTML report: one self-contained file that works offline.

CSS, JavaScript and SVG charts are inline; a Content-Security-Policy (``default-src 'none'``) forbids
the page any network request. Sections (those that apply to the report): summary, metrics with
bootstrap CIs, changes against a baseline, the per-query table with drill-down, latency, k-sweep,
chunking, benchmark / compare tables, security, missing and errors, provenance.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragaudit.report.escape import escape_html as esc
from ragaudit.report.escape import script_json
from ragaudit.report.html_assets import CSS, JS
from ragaudit.report.sections import chunking_data, gate_verdict, k_sweep_data, part, provenance_rows
from ragaudit.report.svg import Bar, Interval, forest_plot, grouped_bars, histogram, line_chart, metric_bars
from ragaudit.report.view import ReportView

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
Section = tuple[str, str, str]
"""``(anchor id, nav title, inner HTML)``."""


def _num(value: Any, digits: int = 4) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return "–"
    return f"{value:.{digits}f}"


def _signed(value: Any, digits: int = 4) -> str:
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return "–"
    return f"{value:+.{digits}f}"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 1) -> str:
    """A table of already-escaped cells; columns from ``numeric_from`` on are right-aligned numbers."""

    def cls(i: int) -> str:
        return ' class="num"' if i >= numeric_from else ""

    head = "".join(f"<th{cls(i)}>{h}</th>" for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f"<td{cls(i)}>{c}</td>" for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _card(label: str, value: str, tone: str = "") -> str:
    return (
        f'<div class="card {tone}"><div class="k">{esc(label)}</div><div class="v">{esc(value)}</div></div>'
    )


def _summary(view: ReportView) -> Section | None:
    report = view.report
    counts = report.get("counts")
    if not isinstance(counts, Mapping):
        return None
    cards = [
        _card("cases", str(counts.get("cases", "–"))),
        _card("answerable", str(counts.get("answerable", "–"))),
        _card("unanswerable (excluded)", str(counts.get("unanswerable", "–"))),
        _card("missing (scored 0)", str(counts.get("missing", 0)), "bad" if counts.get("missing") else ""),
        _card("errors (scored 0)", str(counts.get("errors", 0)), "bad" if counts.get("errors") else ""),
    ]
    if "security" in report:
        leaks = len(view.leaks())
        cards.append(_card("cross-tenant leaks", str(leaks), "bad" if leaks else "good"))
    latency = report.get("latency_ms")
    if isinstance(latency, Mapping):
        cards.append(_card("latency p95", f"{_num(latency.get('p95'), 1)} ms"))
    return "summary", "Summary", f'<div class="cards">{"".join(cards)}</div>'


def _metrics(view: ReportView) -> Section | None:
    if not view.metrics:
        return None
    bars = []
    for m in view.metrics:
        c = m.comparison
        if c is None:
            note = f"CI [{_num(m.ci[0], 3)}, {_num(m.ci[1], 3)}]  n={m.n}" if m.ci else f"n={m.n}"
            bars.append(Bar(m.name, m.value, m.ci, note=note))
            continue
        tone = ("up" if c["delta"] > 0 else "down") if c.get("significant") else ""
        mark = (" ▲" if c["delta"] > 0 else " ▼") if c.get("significant") else ""
        note = f"Δ {_signed(c.get('delta'), 3)}  (p {_num(c.get('p_value_corrected'), 3)}){mark}"
        bars.append(Bar(m.name, m.value, m.ci, c.get("baseline_mean"), note, tone))
    pct = f"{view.confidence:.0%}"
    legend = (
        f'<p class="hint">Bar: mean over answerable queries. Whisker: {pct} percentile-bootstrap CI of the mean '
        f"(resampling queries).{' Amber tick: the baseline.' if view.baseline_label else ''}</p>"
    )
    return "metrics", "Metrics", legend + metric_bars(bars, "metric means with confidence intervals")


def _comparison_rows(rows: Sequence[Mapping[str, Any]], with_system: bool) -> str:
    out = []
    for c in rows:
        sig = bool(c.get("significant"))
        tone = ("up" if c["delta"] > 0 else "down") if sig else ""
        cells = [esc(c["metric"])]
        if with_system:
            cells.append(esc(c["system"]))
        cells += [
            _num(c.get("baseline_mean")),
            _num(c.get("system_mean")),
            f'<span class="{tone}{" sig" if sig else ""}">{_signed(c.get("delta"))}</span>',
            f"[{_signed(c['ci'][0], 3)}, {_signed(c['ci'][1], 3)}]",
            _num(c.get("p_value_corrected"), 3),
            "yes" if sig else "no",
            f"{c.get('wins')}/{c.get('ties')}/{c.get('losses')}",
        ]
        out.append(cells)
    headers = ["metric", *(["system"] if with_system else []), "baseline", "system", "Δ", "CI of Δ"]
    return _table([*headers, "p (Holm)", "significant", "W/T/L"], out, 2 if with_system else 1)


def _forest(rows: Sequence[Mapping[str, Any]], with_system: bool) -> str:
    intervals = [
        Interval(
            f"{c['system']} · {c['metric']}" if with_system else str(c["metric"]),
            c.get("delta"),
            c["ci"][0],
            c["ci"][1],
            bool(c.get("significant")),
        )
        for c in rows
    ]
    return forest_plot(intervals, "paired deltas against the baseline with confidence intervals")


def _moved(rows: Sequence[Mapping[str, Any]], primary: str | None) -> str:
    chosen = next((c for c in rows if c["metric"] == primary), rows[0] if rows else None)
    if chosen is None:
        return ""
    parts = []
    for key, title in (("most_regressed", "Most regressed"), ("most_improved", "Most improved")):
        moved = chosen.get(key) or []
        items = "".join(
            f"<li>{esc(m['id'])} <span class='hint'>{_signed(m['delta'], 3)}</span></li>" for m in moved
        )
        parts.append(
            f"<div><h3>{title} on {esc(chosen['metric'])}</h3><ul class='ids'>{items or '<li>none</li>'}</ul></div>"
        )
    return f'<div class="cards">{"".join(parts)}</div>'


def _changes(view: ReportView) -> Section | None:
    if view.comparison is None:
        return None
    rows = view.comparison["comparisons"]
    hint = (
        f'<p class="hint">This run against <b>{esc(view.baseline_label or "")}</b> on the same '
        f"{rows[0]['n'] if rows else 0} answerable queries: paired randomization test, Holm-corrected across "
        f"{len(rows)} metrics, α = {view.alpha:g}; blue points are significant.</p>"
    )
    body = hint + _forest(rows, False) + _comparison_rows(rows, False) + _moved(rows, view.primary_metric)
    return "changes", "Changes", body


def _columns(view: ReportView) -> list[dict[str, str]]:
    cols = [
        {"key": "id", "label": "case", "kind": ""},
        {"key": "query", "label": "query", "kind": ""},
        {"key": "tenant_id", "label": "tenant", "kind": ""},
        {"key": "status", "label": "status", "kind": ""},
    ]
    cols += [{"key": m.name, "label": m.name, "kind": "metric"} for m in view.metrics]
    if view.baseline_label is not None and view.primary_metric:
        cols.append({"key": view.primary_metric, "label": f"Δ {view.primary_metric}", "kind": "delta"})
    if view.latencies():
        cols.append({"key": "latency_ms", "label": "ms", "kind": ""})
    return cols


def _queries(view: ReportView) -> Section | None:
    if view.kind != "eval":
        return None
    columns = _columns(view)
    numeric = {"metric", "delta"}
    head = "".join(
        f"<th{' class=num' if c['kind'] in numeric or c['key'] == 'latency_ms' else ''} "
        f'title="sort by {esc(c["label"])}">{esc(c["label"])}</th>'
        for c in columns
    )
    options = ["all", "ok", "missing", "error", "unanswerable", "leaks"]
    if view.baseline_label is not None:
        options += ["worse", "better"]
    labels = {"worse": "worse than baseline", "better": "better than baseline", "leaks": "with leaks"}
    select = "".join(f'<option value="{o}">{esc(labels.get(o, o))}</option>' for o in options)
    missing_text = any(c.get("query") is None for c in view.cases)
    hint = (
        '<p class="hint">Click a row for the retrieved chunks (grades, tenants)'
        + (" and what changed against the baseline" if view.baseline_label else "")
        + "; click a column to sort."
        + (" Query text: pass <code>--dataset</code>." if missing_text else "")
        + "</p>"
    )
    body = (
        hint
        + '<div class="toolbar"><input id="search" type="search" placeholder="search id, query, tenant, chunk…" '
        + 'aria-label="search queries">'
        + f'<select id="status" aria-label="filter">{select}</select><span id="shown"></span></div>'
        + f'<div class="tablewrap"><table id="cases"><thead><tr>{head}</tr></thead><tbody></tbody></table></div>'
        + '<button id="more" type="button" hidden>show more</button>'
        + "<noscript><p>The per-query table needs JavaScript.</p></noscript>"
    )
    return "queries", "Queries", body


def _latency(view: ReportView) -> Section | None:
    values = view.latencies()
    latency = view.report.get("latency_ms")
    if not values or not isinstance(latency, Mapping):
        return None
    markers = {
        k: float(latency[k]) for k in ("p50", "p95", "p99") if isinstance(latency.get(k), (int, float))
    }
    hint = f'<p class="hint">Per-query latency of {len(values)} queries (ms), with percentiles.</p>'
    return "latency", "Latency", hint + histogram(values, "latency histogram", markers)


def _k_sweep(view: ReportView) -> Section | None:
    sweep = k_sweep_data(view.report)
    if sweep is None:
        return None
    series = [(str(s.get("name", "")), list(s.get("values", []))) for s in sweep.get("series", [])]
    return "k-sweep", "k-sweep", line_chart([str(k) for k in sweep["k"]], series, "metrics by k", "k")


def _chunking(view: ReportView) -> Section | None:
    chunking = chunking_data(view.report)
    if chunking is None:
        return None
    rows = [r for r in chunking["rows"] if isinstance(r, Mapping)]
    metrics = list(dict.fromkeys(m for r in rows for m in r.get("metrics", {})))
    series = [(m, [r["metrics"].get(m) for r in rows]) for m in metrics]
    chart = grouped_bars([str(r.get("label", "")) for r in rows], series, "metrics by chunking")
    table = _table(
        ["chunking", *map(esc, metrics), "chunks"],
        [
            [
                esc(r.get("label", "")),
                *(_num(r["metrics"].get(m)) for m in metrics),
                esc(r.get("chunks", "–")),
            ]
            for r in rows
        ],
    )
    return "chunking", "Chunking", chart + table


def _benchmark(view: ReportView) -> Section | None:
    if view.kind != "benchmark":
        return None
    report = view.report
    pipelines = [p for p in report.get("pipelines", []) if isinstance(p, Mapping)]
    metrics = list(pipelines[0].get("metrics", {})) if pipelines else []
    series = [(str(p["name"]), [p["metrics"].get(m) for m in metrics]) for p in pipelines]
    rows = []
    for p in pipelines:
        latency = part(p, "latency_ms")
        rows.append(
            [
                esc(p["name"]),
                *(_num(p["metrics"].get(m)) for m in metrics),
                _num(latency.get("p95"), 1),
                _num(p.get("index_build_seconds"), 2),
                esc(p.get("leaks", "–")),
            ]
        )
    table = _table(["pipeline", *map(esc, metrics), "p95 ms", "build s", "leaks"], rows)
    comparisons = report.get("comparisons", [])
    body = grouped_bars(metrics, series, "pipelines side by side") + table
    if comparisons:
        body += f"<h3>Against {esc(report.get('baseline', ''))}</h3>" + _forest(comparisons, True)
        body += _comparison_rows(comparisons, True)
    return "benchmark", "Benchmark", body


def _compare(view: ReportView) -> Section | None:
    if view.kind != "compare":
        return None
    rows = view.report.get("comparisons", [])
    hint = (
        f'<p class="hint">Baseline <b>{esc(view.report.get("baseline", ""))}</b>; significant at α = '
        f"{esc(view.report.get('alpha'))} after {esc(view.report.get('correction', ''))} correction.</p>"
    )
    return "compare", "Comparison", hint + _forest(rows, True) + _comparison_rows(rows, True)


def _security(view: ReportView) -> Section | None:
    if "security" not in view.report:
        return None
    leaks = view.leaks()
    if not leaks:
        return (
            "security",
            "Security",
            '<p class="ok-line">✓ No cross-tenant leaks: every returned chunk belongs to the caller\'s tenant.</p>',
        )
    cases = len({leak.get("case_id") for leak in leaks})
    rows = [
        [
            esc(leak.get("case_id", "")),
            esc(leak.get("chunk_id", "")),
            esc(leak.get("rank", "")),
            esc(leak.get("claimed_tenant") or "(unlabelled)"),
            esc(leak.get("caller_tenant", "")),
        ]
        for leak in leaks
    ]
    head = f'<p class="bad-line">✗ {len(leaks)} cross-tenant chunk(s) returned in {cases} case(s): a release blocker.</p>'
    return "security", "Security", head + _table(["case", "chunk", "rank", "owner", "asked as"], rows, 5)


def _problems(view: ReportView) -> Section | None:
    report = view.report
    parts = []
    missing = [str(m) for m in report.get("missing", [])]
    if missing:
        items = "".join(f"<li>{esc(m)}</li>" for m in missing)
        parts.append(f"<h3>Missing from the run ({len(missing)}, scored 0)</h3><ul class='ids'>{items}</ul>")
    errors = list(report.get("errors", []))
    if errors:
        rows = [[esc(e.get("id", "")), esc(e.get("error") or "")] for e in errors]
        parts.append(f"<h3>Errors ({len(errors)}, scored 0)</h3>" + _table(["case", "error"], rows, 2))
    notes = [str(n) for n in report.get("notes", [])]
    if notes:
        parts.append("<h3>Notes</h3><ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    return ("problems", "Missing & errors", "".join(parts)) if parts else None


def _provenance(view: ReportView) -> Section:
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in provenance_rows(view.report))
    return "provenance", "Provenance", f'<table class="kv">{rows}</table>'


SECTIONS: tuple[Callable[[ReportView], Section | None], ...] = (
    _summary,
    _metrics,
    _changes,
    _queries,
    _benchmark,
    _compare,
    _latency,
    _k_sweep,
    _chunking,
    _security,
    _problems,
    _provenance,
)


def _header(view: ReportView, nav: str) -> str:
    report = view.report
    git = part(report, "provenance", "git")
    bits = [
        esc(view.kind),
        esc(report.get("created_at", "")),
        f"ragaudit {esc(report.get('ragaudit_version', ''))}",
    ]
    if git.get("commit"):
        bits.append(f"commit {esc(str(git['commit'])[:10])}")
    if view.baseline_label:
        bits.append(f"baseline {esc(view.baseline_label)}")
    verdict = gate_verdict(report)
    gate = ""
    if verdict is not None:
        passed, gates = verdict
        failed = [g for g in gates if not g.passed]
        detail = "; ".join(f"{g.name}: {' '.join(g.messages)}" for g in failed)
        gate = (
            f'<p><span class="badge {"pass" if passed else "fail"}">gate {"passed" if passed else "FAILED"}</span> '
            f"{esc(detail)}</p>"
        )
    return (
        f'<header><div class="brand">ragaudit report</div><h1>{esc(view.title)}</h1>'
        f'<div class="sub">{" · ".join(bits)}</div>{gate}<nav>{nav}</nav></header>'
    )


def _case_data(view: ReportView) -> dict[str, Any]:
    return {
        "columns": _columns(view) if view.kind == "eval" else [],
        "primary": view.primary_metric,
        "hasBaseline": view.baseline_label is not None,
        "baseline": view.baseline_label,
        "cases": view.cases,
    }


def render_html(view: ReportView) -> str:
    """The whole page as one string."""
    sections = [s for s in (make(view) for make in SECTIONS) if s is not None]
    nav = "".join(f'<a href="#{sid}">{esc(title)}</a>' for sid, title, _ in sections)
    body = "".join(
        f'<section id="{sid}"><h2>{esc(title)}</h2>{inner}</section>' for sid, title, inner in sections
    )
    return (
        "<!doctype html>\n"
        '<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>ragaudit · {esc(view.title)}</title><style>{CSS}</style></head><body>"
        f"{_header(view, nav)}<main>{body}</main>"
        f"<footer>Written by ragaudit {esc(view.report.get('ragaudit_version', ''))}; "
        "this file is self-contained and works offline.</footer>"
        f'<script type="application/json" id="ragaudit-data">{script_json(_case_data(view))}</script>'
        f"<script>{JS}</script></body></html>\n"
    )
