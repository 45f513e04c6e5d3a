"""The Markdown report: compact enough for a pull-request comment.

Sections: gate verdict (when the report carries one), the metric table (mean, bootstrap CI, and with
a baseline the paired delta and Holm-corrected p), significant changes, security (cross-tenant
leaks), missing cases and errors, notes, and the provenance in a collapsed block. Every value taken
from user data goes through :func:`ragaudit.report.escape.escape_md`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ragaudit.report.escape import escape_md as md
from ragaudit.report.sections import chunking_data, gate_verdict, k_sweep_data, part, provenance_rows
from ragaudit.report.view import ReportView

MAX_K_COLUMNS = 10
SHOWN_KS = frozenset({1, 3, 5, 10, 20, 50, 100})
"""A longer k-sweep shows only these k (and the last) in Markdown; the HTML plot has every k."""
LIST_LIMIT = 10
"""At most this many leaks, errors or moved queries are listed; a line says how many more there are."""


def _num(value: Any, digits: int = 4) -> str:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
        return "–"
    return f"{value:.{digits}f}"


def _signed(value: Any, digits: int = 4) -> str:
    if not isinstance(value, (int, float)) or not math.isfinite(value):
        return "–"
    return f"{value:+.{digits}f}"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 1) -> list[str]:
    align = ["---" if i < numeric_from else "---:" for i in range(len(headers))]
    return [
        "| " + " | ".join(headers) + " |",
        "| " + " | ".join(align) + " |",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def _more(total: int) -> list[str]:
    return [f"- … and {total - LIST_LIMIT} more"] if total > LIST_LIMIT else []


def _gate(report: Mapping[str, Any]) -> list[str]:
    verdict = gate_verdict(report)
    if verdict is None:
        return []
    passed, gates = verdict
    lines = [f"**Gate: {'✅ PASSED' if passed else '❌ FAILED'}**", ""]
    for g in gates:
        mark = "✅" if g.passed else "❌"
        detail = "; ".join(md(m) for m in g.messages)
        lines.append(f"- {mark} {md(g.name)}" + (f": {detail}" if detail else ""))
    return [*lines, ""] if gates else lines


def _metrics(view: ReportView) -> list[str]:
    pct = f"{view.confidence:.0%} CI"
    if view.baseline_label is None:
        rows = [
            [md(m.name), _num(m.value), f"[{_num(m.ci[0], 3)}, {_num(m.ci[1], 3)}]" if m.ci else "–"]
            for m in view.metrics
        ]
        return _table(["metric", "mean", pct], rows)
    rows = []
    for m in view.metrics:
        c = m.comparison or {}
        delta = _signed(c.get("delta"))
        if c.get("significant"):
            delta = f"**{delta}** {'▲' if c['delta'] > 0 else '▼'}"
        rows.append(
            [
                md(m.name),
                _num(c.get("baseline_mean")),
                _num(m.value),
                f"[{_num(m.ci[0], 3)}, {_num(m.ci[1], 3)}]" if m.ci else "–",
                delta,
                _num(c.get("p_value_corrected"), 3),
                f"{c.get('wins', '–')}/{c.get('ties', '–')}/{c.get('losses', '–')}",
            ]
        )
    return _table(
        ["metric", f"baseline ({md(view.baseline_label)})", "this run", pct, "Δ", "p (Holm)", "W/T/L"], rows
    )


def _counts(report: Mapping[str, Any]) -> list[str]:
    c = report.get("counts", {})
    parts = [
        f"{c.get('cases', 0)} cases: {c.get('answerable', 0)} answerable (averaged), "
        f"{c.get('unanswerable', 0)} unanswerable (excluded), {c.get('missing', 0)} missing and "
        f"{c.get('errors', 0)} errors (scored 0)"
    ]
    latency = report.get("latency_ms")
    if isinstance(latency, Mapping):
        parts.append(f"latency p50 {_num(latency.get('p50'), 1)} ms, p95 {_num(latency.get('p95'), 1)} ms")
    return [" · ".join(parts)]


def _changes(view: ReportView) -> list[str]:
    if view.comparison is None:
        return []
    base = md(view.baseline_label or "baseline")
    head = f"paired randomization test, Holm-corrected across {len(view.comparison['comparisons'])} metrics, α = {view.alpha:g}"
    significant = view.significant()
    if not significant:
        return [f"**No significant change against {base}** ({head}).", ""]
    lines = [f"**Significant changes against {base}** ({head}):", ""]
    for c in significant:
        lines.append(
            f"- {md(c['metric'])}: {_signed(c['delta'])} [{_signed(c['ci'][0], 3)}, {_signed(c['ci'][1], 3)}], "
            f"p = {_num(c['p_value_corrected'], 3)}, {c['wins']} queries better, {c['losses']} worse"
        )
    primary = next((c for c in significant if c["metric"] == view.primary_metric), significant[0])
    for key, word in (("most_regressed", "most regressed"), ("most_improved", "most improved")):
        moved = primary.get(key) or []
        if moved:
            shown = ", ".join(f"{md(m['id'])} ({_signed(m['delta'], 3)})" for m in moved)
            lines.append(f"- {word} on {md(primary['metric'])}: {shown}")
    return [*lines, ""]


def _security(view: ReportView) -> list[str]:
    if "security" not in view.report:
        return []
    leaks = view.leaks()
    if not leaks:
        return ["**Security:** ✅ no cross-tenant leaks.", ""]
    cases = len({leak.get("case_id") for leak in leaks})
    lines = [
        f"**Security: ❌ {len(leaks)} cross-tenant chunk(s) returned in {cases} case(s): a release blocker.**",
        "",
    ]
    rows = [
        [
            md(leak.get("case_id", "")),
            md(leak.get("chunk_id", "")),
            str(leak.get("rank", "")),
            md(leak.get("claimed_tenant") or "(unlabelled)"),
            md(leak.get("caller_tenant", "")),
        ]
        for leak in leaks[:LIST_LIMIT]
    ]
    return [*lines, *_table(["case", "chunk", "rank", "owner", "asked as"], rows, 2), *_more(len(leaks)), ""]


def _problems(report: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    missing = [str(m) for m in report.get("missing", [])]
    if missing:
        shown = ", ".join(md(m) for m in missing[:LIST_LIMIT])
        extra = f" … and {len(missing) - LIST_LIMIT} more" if len(missing) > LIST_LIMIT else ""
        lines.append(f"**Missing from the run ({len(missing)}, scored 0):** {shown}{extra}")
        lines.append("")
    errors = list(report.get("errors", []))
    if errors:
        lines.append(f"**Errors ({len(errors)}, scored 0):**")
        lines.append("")
        lines += [f"- {md(e.get('id', ''))}: {md(e.get('error') or '', 200)}" for e in errors[:LIST_LIMIT]]
        lines += [*_more(len(errors)), ""]
    notes = [str(n) for n in report.get("notes", [])]
    if notes:
        lines += [f"- note: {md(n, 300)}" for n in notes[:LIST_LIMIT]] + _more(len(notes)) + [""]
    return lines


def _provenance(report: Mapping[str, Any]) -> list[str]:
    rows = [[f"**{md(label)}**", md(text)] for label, text in provenance_rows(report)]
    return [
        "<details><summary>Provenance</summary>",
        "",
        *_table(["field", "value"], rows, 2),
        "",
        "</details>",
    ]


def _comparisons(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    table = [
        [
            md(c["metric"]),
            md(c["system"]),
            _num(c.get("baseline_mean")),
            _num(c.get("system_mean")),
            f"**{_signed(c.get('delta'))}**" if c.get("significant") else _signed(c.get("delta")),
            f"[{_signed(c['ci'][0], 3)}, {_signed(c['ci'][1], 3)}]",
            _num(c.get("p_value_corrected"), 3),
            f"{c.get('wins')}/{c.get('ties')}/{c.get('losses')}",
        ]
        for c in rows
    ]
    return _table(["metric", "system", "baseline", "system", "Δ", "CI of Δ", "p (Holm)", "W/T/L"], table, 2)


def _benchmark(report: Mapping[str, Any]) -> list[str]:
    pipelines = [p for p in report.get("pipelines", []) if isinstance(p, Mapping)]
    metrics = list(pipelines[0].get("metrics", {})) if pipelines else []
    significant = {(c["system"], c["metric"]) for c in report.get("comparisons", []) if c.get("significant")}
    rows = []
    for p in pipelines:
        latency = part(p, "latency_ms")
        cells = [md(p["name"])]
        cells += [
            _num(p["metrics"].get(m)) + (" \\*" if (p["name"], m) in significant else "") for m in metrics
        ]
        cells += [_num(latency.get("p95"), 1), str(p.get("leaks", "–"))]
        rows.append(cells)
    inv = report.get("invariants", {})
    return [
        *_table(["pipeline", *[md(m) for m in metrics], "p95 ms", "leaks"], rows),
        "",
        f"Every pipeline ran the same {inv.get('cases', '?')} cases at top_k {inv.get('top_k', '?')}; "
        f"\\* = significantly different from {md(report.get('baseline', 'the baseline'))} "
        "(paired randomization test, Holm-corrected).",
        "",
    ]


def _sweeps(report: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    sweep = k_sweep_data(report)
    if sweep is not None:
        ks = list(sweep["k"])
        keep = [i for i, k in enumerate(ks) if len(ks) <= MAX_K_COLUMNS or k in SHOWN_KS or i == len(ks) - 1]
        rows = [
            [md(s.get("name", "")), *(_num(s["values"][i]) if i < len(s["values"]) else "–" for i in keep)]
            for s in sweep.get("series", [])
            if isinstance(s, Mapping) and isinstance(s.get("values"), list)
        ]
        lines += ["**Metrics by k**", "", *_table(["series", *[f"k={ks[i]}" for i in keep]], rows), ""]
    chunking = chunking_data(report)
    if chunking is not None:
        chunk_rows = [r for r in chunking["rows"] if isinstance(r, Mapping)]
        metrics = list(dict.fromkeys(m for r in chunk_rows for m in r.get("metrics", {})))
        rows = [
            [md(r.get("label", "")), *(_num(r["metrics"].get(m)) for m in metrics), str(r.get("chunks", "–"))]
            for r in chunk_rows
        ]
        lines += ["**Chunking**", "", *_table(["chunking", *[md(m) for m in metrics], "chunks"], rows), ""]
    return lines


def render_markdown(view: ReportView) -> str:
    """The Markdown report of any report kind (eval reports get the full treatment)."""
    report = view.report
    lines = [f"### ragaudit {md(view.kind)}: {md(view.title)}", "", *_gate(report)]
    if view.kind == "eval":
        lines += [*_metrics(view), "", *_counts(report), "", *_changes(view), *_security(view)]
        lines += _problems(report)
    elif view.kind == "compare":
        lines += [
            f"Baseline **{md(report.get('baseline', ''))}**; bold Δ = significant at α = "
            f"{report.get('alpha')} after {md(report.get('correction', ''))} correction.",
            "",
            *_comparisons(report.get("comparisons", [])),
            "",
        ]
    elif view.kind == "benchmark":
        lines += _benchmark(report)
    lines += _sweeps(report)
    return "\n".join([*lines, *_provenance(report)]) + "\n"
