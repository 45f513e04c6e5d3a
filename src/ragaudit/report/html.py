"""The HTML report: one self-contained file that works offline.

CSS, JavaScript and SVG charts are inline; a Content-Security-Policy (``default-src 'none'``) forbids
the page any network request. Sections (those that apply to the report): summary, metrics with
bootstrap CIs, changes against a baseline, the per-query table with drill-down, latency, k-sweep,
chunking, benchmark / compare tables, the experiment sections (ablation gains with a forest plot,
reranker before / after / oracle, rewrite constraint preservation and flagged rewrites), security,
missing and errors, provenance.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ragaudit.report.escape import escape_html as esc
from ragaudit.report.escape import script_json
from ragaudit.report.html_assets import CSS, JS
from ragaudit.report.sections import (
    ANALYSES,
    ablation_gains,
    captured_text,
    chunking_data,
    ci_bounds,
    ci_text,
    gate_verdict,
    k_sweep_data,
    ms_pair,
    part,
    provenance_rows,
    records,
    rewrite_flagged,
    rewrite_metric_rows,
    significance,
    wtl_text,
)
from ragaudit.report.sections import num as _num
from ragaudit.report.sections import signed as _signed
from ragaudit.report.svg import Bar, Interval, forest_plot, grouped_bars, histogram, line_chart, metric_bars
from ragaudit.report.view import ReportView

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"
Section = tuple[str, str, str]
"""``(anchor id, nav title, inner HTML)``."""


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
    if not isinstance(counts, Mapping) or not isinstance(counts.get("cases"), int):
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
    if isinstance(latency, Mapping) and "p95" in latency:
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


def _delta(c: Mapping[str, Any] | None) -> str:
    """A paired delta, coloured and bold when significant."""
    if c is None:
        return "–"
    if not c.get("significant"):
        return _signed(c.get("delta"))
    delta = c.get("delta")
    tone = "up" if isinstance(delta, (int, float)) and delta > 0 else "down"
    return f'<span class="{tone} sig">{_signed(c.get("delta"))}</span>'


def _interval(label: str, c: Mapping[str, Any]) -> Interval:
    lo, hi = ci_bounds(c)
    return Interval(label, c.get("delta"), lo, hi, bool(c.get("significant")))


def _comparison_rows(rows: Sequence[Mapping[str, Any]], with_system: bool) -> str:
    out = []
    for c in rows:
        cells = [esc(c["metric"])]
        if with_system:
            cells.append(esc(c["system"]))
        cells += [
            _num(c.get("baseline_mean")),
            _num(c.get("system_mean")),
            _delta(c),
            ci_text(c),
            _num(c.get("p_value_corrected"), 3),
            "yes" if c.get("significant") else "no",
            esc(wtl_text(c)),
        ]
        out.append(cells)
    headers = ["metric", *(["system"] if with_system else []), "baseline", "system", "Δ", "CI of Δ"]
    return _table([*headers, "p (Holm)", "significant", "W/T/L"], out, 2 if with_system else 1)


def _forest(rows: Sequence[Mapping[str, Any]], with_system: bool) -> str:
    intervals = [
        _interval(f"{c['system']} · {c['metric']}" if with_system else str(c["metric"]), c) for c in rows
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


def _significance_hint(report: Mapping[str, Any], what: str) -> str:
    alpha, correction = significance(report)
    return (
        f"paired randomization test, {esc(correction)} correction across {what}, α = {esc(alpha)}; "
        "blue points and bold deltas are significant"
    )


def _gain_cells(c: Mapping[str, Any] | None) -> list[str]:
    if c is None:
        return ["–", "–", "–"]
    return [_delta(c), ci_text(c), _num(c.get("p_value_corrected"), 3)]


def _ablation(view: ReportView) -> Section | None:
    if view.kind != "ablation":
        return None
    report = view.report
    metrics = [str(m) for m in report.get("metrics", []) or []]
    gains = ablation_gains(report)
    intervals = [
        _interval(f"{g['toggle']} · {analysis.removesuffix('-one')} · {g['metric']}", g[analysis])
        for g in gains
        for analysis in ANALYSES
        if g[analysis] is not None
    ]
    gain_rows = [
        [esc(g["toggle"]), esc(g["metric"]), *(cell for a in ANALYSES for cell in _gain_cells(g[a]))]
        for g in gains
    ]
    variant_rows = [
        [
            esc(v.get("name", ""))
            + (f" <span class='hint'>= {esc(v['same_as'])}</span>" if v.get("same_as") else ""),
            esc(", ".join(map(str, v.get("on", []) or [])) or "–"),
            *(_num(part(v, "metrics").get(m)) for m in metrics),
            _num(part(v, "latency_ms").get("p95"), 1),
            _num(v.get("context_tokens"), 0),
        ]
        for v in records(report, "variants")
    ]
    hint = (
        '<p class="hint">Gain = metric with the toggle − without it. <b>remove-one</b>: the full pipeline '
        "against the full pipeline without the toggle (what it adds on top of everything else); "
        "<b>add-one</b>: the bare pipeline plus the toggle against the bare pipeline (what it adds on its "
        f"own); the plot labels them remove and add. {_significance_hint(report, f'all {len(intervals)} gains')}.</p>"
    )
    inv = part(report, "invariants")
    invariants = (
        f'<p class="ok-line">✓ Every variant scored the same {esc(inv.get("cases", "?"))} cases '
        f"({esc(inv.get('answerable', '?'))} answerable) under the same tenants at top_k "
        f"{esc(inv.get('top_k', '?'))}, same dataset and policy.</p>"
        if inv.get("same_for_every_variant")
        else ""
    )
    body = (
        hint
        + forest_plot(intervals, "gain of each toggle with confidence intervals")
        + _table(
            ["toggle", "metric", "remove-one Δ", "CI", "p (Holm)", "add-one Δ", "CI", "p (Holm)"],
            gain_rows,
            2,
        )
        + "<h3>Variants</h3>"
        + _table(
            ["variant", "on", *map(esc, metrics), "p95 ms", f"tokens@{esc(report.get('context_k', 'k'))}"],
            variant_rows,
            2,
        )
        + invariants
    )
    return "ablation", "Ablation", body


def _reranker(view: ReportView) -> Section | None:
    if view.kind != "reranker-eval":
        return None
    report = view.report
    summary = records(report, "summary")
    names = [str(r.get("metric", "")) for r in summary]
    series = [
        (label, [r.get(key) for r in summary])
        for key, label in (("before", "before"), ("after", "after"), ("ceiling", "oracle"))
    ]
    rows = [
        [
            esc(r.get("metric", "")),
            _num(r.get("before")),
            _num(r.get("after")),
            _delta(r),
            ci_text(r),
            _num(r.get("p_value_corrected"), 3),
            esc(wtl_text(r)),
            _num(r.get("ceiling")),
            captured_text(r),
        ]
        for r in summary
    ]
    recall, latency = part(report, "first_stage_recall"), part(report, "latency_ms")
    cache = part(latency, "reranker_cache")
    cards = [
        _card(f"first-stage {recall.get('metric', 'recall')}", _num(recall.get("value"))),
        _card("candidates reranked", str(report.get("top_n", "–"))),
    ]
    if latency:
        cards += [
            _card("first stage, p50 / p95", ms_pair(latency.get("first_stage"))),
            _card("the reranker adds, p50 / p95", ms_pair(latency.get("rerank_added"))),
        ]
    if cache:
        cards.append(
            _card("reranker cache hits / misses", f"{cache.get('hits', 0)} / {cache.get('misses', 0)}")
        )
    hint = (
        f'<p class="hint">Reranker <b>{esc(report.get("reranker", ""))}</b> reorders the first stage\'s top '
        f"{esc(report.get('top_n', '?'))}: <b>before</b> is the first-stage order, <b>after</b> the reranked "
        "order, <b>oracle</b> the same candidates in the ideal order by grade (the best any reranker can "
        "do); captured = (after − before) / (oracle − before). "
        f"{_significance_hint(report, 'the metrics')}.</p>"
    )
    body = (
        hint
        + f'<div class="cards">{"".join(cards)}</div>'
        + grouped_bars(names, series, "before, after and oracle per metric")
        + _table(["metric", "before", "after", "Δ", "CI", "p (Holm)", "W/T/L", "oracle", "captured"], rows)
        + forest_plot(
            [_interval(n, r) for n, r in zip(names, summary, strict=True)], "reranker gain per metric"
        )
    )
    return "reranker", "Reranker", body


def _rewrite(view: ReportView) -> Section | None:
    if view.kind != "rewrite-eval":
        return None
    report = view.report
    primary = str(report.get("primary_metric", ""))
    metric_rows = rewrite_metric_rows(report)
    rows = [
        [
            esc(r["metric"]),
            _num(r["baseline"]),
            _num(r["rewrite"]),
            _delta(r["comparison"]) if r["comparison"] else _signed(r["delta"]),
            ci_text(r["comparison"]),
            _num((r["comparison"] or {}).get("p_value_corrected"), 3),
            esc(wtl_text(r["comparison"])),
        ]
        for r in metric_rows
    ]
    compared = [(r["metric"], r["comparison"]) for r in metric_rows if r["comparison"]]
    cons, latency = part(report, "constraints"), part(report, "latency_ms")
    flagged_count = cons.get("flagged", 0)
    cards = [
        _card("queries rewritten", f"{cons.get('rewritten', '–')} of {cons.get('cases', '–')}"),
        _card("flagged (lost a constraint)", str(flagged_count), "bad" if flagged_count else "good"),
        _card(f"flagged although {primary} improved", str(cons.get("flagged_with_gain", 0))),
        _card("swaps", str(cons.get("swapped", 0)), "bad" if cons.get("swapped") else ""),
    ]
    if latency:
        cards += [
            _card("added per query, p50 / p95", ms_pair(latency.get("added"))),
            _card("in the rewriter, p50 / p95", ms_pair(latency.get("rewriter"))),
        ]
    lost = ", ".join(f"{kind} {n}" for kind, n in part(cons, "lost_by_kind").items())
    flagged = rewrite_flagged(report)
    flagged_rows = [
        [
            esc(f["id"]),
            esc(f["tenant_id"] or ""),
            esc(f["query"]),
            esc(f["rewritten"] if f["rewritten"] is not None else "(no rewrite)"),
            "<br>".join(esc(x) for x in f["lost"]) or "–",
            "<br>".join(esc(x) for x in f["swapped"]) or "–",
            _signed(f["delta"], 3),
        ]
        for f in flagged
    ]
    hint = (
        f'<p class="hint">Rewriter <b>{esc(report.get("rewriter", ""))}</b> against the same pipeline without '
        f"it, case by case; primary metric {esc(primary)}. {_significance_hint(report, 'the metrics')}.</p>"
    )
    body = (
        hint
        + forest_plot([_interval(m, c) for m, c in compared], "rewrite minus baseline per metric")
        + _table(["metric", "baseline", "rewrite", "Δ", "CI", "p (Holm)", "W/T/L"], rows)
        + "<h3>Constraint preservation</h3>"
        + f'<div class="cards">{"".join(cards)}</div>'
        + (f'<p class="hint">Lost by kind: {esc(lost)}.</p>' if lost else "")
    )
    if flagged:
        body += (
            f'<h3>Flagged rewrites ({len(flagged)})</h3><p class="hint">The rewrite lost an entity or '
            "constraint of the question: flagged whatever its metrics say.</p>"
            + _table(
                ["case", "tenant", "query", "rewritten", "lost", "swapped", f"Δ {esc(primary)}"],
                flagged_rows,
                6,
            )
        )
    else:
        body += '<p class="ok-line">✓ No rewrite lost an entity or constraint of its question.</p>'
    return "rewrite", "Rewrite", body


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
    errors = records(report, "errors")
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
    _ablation,
    _reranker,
    _rewrite,
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
