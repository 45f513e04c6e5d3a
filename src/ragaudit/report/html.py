"""The HTML report page: one self-contained file that works offline.

CSS, JavaScript and SVG charts are inline; a Content-Security-Policy (``default-src 'none'``) forbids
the page any network request. The page loop (:func:`render_html`): the header (with the gate verdict),
the summary cards (the report's counts), the kind's part (its document drawn by
:func:`ragaudit.report.draw.html.draw_html`; every built-in kind builds one, a third party's older
``html`` hook is shown as text), then the page's own sections where the kind's document has none of the same anchor: the
per-query table of a report with cases, a report's own ``k_sweep`` / ``chunking`` sections, missing
cases and errors, provenance.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ragaudit.artifacts.escape import escape_html as esc
from ragaudit.artifacts.escape import script_json
from ragaudit.report.document import OUTCOME, PROBLEMS
from ragaudit.report.draw.html import draw_html
from ragaudit.report.html_assets import CSS, JS
from ragaudit.report.html_parts import Section, card, html_table
from ragaudit.report.kinds.fields import Counts, Latency
from ragaudit.report.sections import (
    gate_state,
    gate_verdict,
    part,
)
from ragaudit.report.sections import num as _num
from ragaudit.report.svg import dot_plot, line_chart
from ragaudit.report.view import ReportView
from ragaudit.verdict import POLICY_LOWERED

CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:"


def _summary(view: ReportView) -> Section | None:
    counts = view.counts()
    if counts is None:
        return None
    cards = [
        card("cases", str(counts.cases)),
        card("answerable", _or_dash(counts.answerable)),
        card("unanswerable (excluded)", _or_dash(counts.unanswerable)),
        card("missing (scored 0)", str(counts.missing or 0), "bad" if counts.missing else ""),
        _errors_card(counts),
    ]
    verdict = view.isolation()
    if verdict is not None:
        tone = {"pass": "good", "fail": "bad", "not_verified": "warn"}[verdict.state]
        shown = str(len(view.leaks())) if verdict.state != "not_verified" else "not verified"
        cards.append(card("cross-tenant leaks", shown, tone))
    latency = Latency.read(view.report.get("latency_ms"))
    if latency is not None and latency.p95 is not None:
        cards.append(card("latency p95", f"{_num(latency.p95, 1)} ms"))
    return "summary", "Summary", f'<div class="cards">{"".join(cards)}</div>'


def _errors_card(counts: Counts) -> str:
    """Every failed case: ``errors (scored 0)``, or with failed unanswerable cases ``errors (9 answerable
    scored 0)`` over the count of all of them."""
    errors = (counts.errors or 0) + counts.unanswerable_errors
    label = (
        f"errors ({counts.errors or 0} answerable scored 0)"
        if counts.unanswerable_errors
        else "errors (scored 0)"
    )
    return card(label, str(errors), "bad" if errors else "")


def _or_dash(value: object) -> str:
    return "–" if value is None else str(value)


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
    """The per-query table of a report with cases (an eval report's: sortable, filterable, each row
    opens the retrieved chunks)."""
    if not view.cases:
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
        + f'<div class="tablewrap"><table id="cases" class="stack"><thead><tr>{head}</tr></thead><tbody></tbody></table></div>'
        + '<button id="more" type="button" hidden>show more</button>'
        + "<noscript><p>The per-query table needs JavaScript.</p></noscript>"
    )
    return "queries", "Queries", body


def _k_sweep(view: ReportView) -> Section | None:
    sweep = view.k_sweep()
    if sweep is None:
        return None
    series = [(str(s.get("name", "")), list(s.get("values", []))) for s in sweep.get("series", [])]
    return "k-sweep", "k-sweep", line_chart([str(k) for k in sweep["k"]], series, "metrics by k", "k")


def _chunking(view: ReportView) -> Section | None:
    chunking = view.chunking()
    if chunking is None:
        return None
    rows = [r for r in chunking["rows"] if isinstance(r, Mapping)]
    metrics = list(dict.fromkeys(m for r in rows for m in r.get("metrics", {})))
    labels = [str(r.get("label", "")) for r in rows]
    series = [(label, [r["metrics"].get(m) for m in metrics]) for label, r in zip(labels, rows, strict=True)]
    first = [v if isinstance(v, (int, float)) else float("-inf") for _, (v, *_) in series] if metrics else []
    best = labels[first.index(max(first))] if first else None
    chart = dot_plot(metrics, series, "every metric per chunking, axes scaled to the data", best)
    table = html_table(
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


def _problems(view: ReportView) -> Section | None:
    problems = view.problems()
    parts = []
    missing = problems.missing
    if missing:
        items = "".join(f"<li>{esc(m)}</li>" for m in missing)
        parts.append(f"<h3>Missing from the run ({len(missing)}, scored 0)</h3><ul class='ids'>{items}</ul>")
    errors = problems.errors
    if errors:
        rows = [[esc(cid), esc(error)] for cid, error in errors]
        parts.append(f"<h3>Errors ({len(errors)}, scored 0)</h3>" + html_table(["case", "error"], rows, 2))
    notes = problems.notes
    if notes:
        parts.append("<h3>Notes</h3><ul>" + "".join(f"<li>{esc(n)}</li>" for n in notes) + "</ul>")
    return (PROBLEMS, "Missing & errors", "".join(parts)) if parts else None


def _provenance(view: ReportView) -> Section:
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in view.provenance())
    return "provenance", "Provenance", f'<table class="kv">{rows}</table>'


SECTIONS: tuple[Callable[[ReportView], Section | None], ...] = (
    _queries,
    _k_sweep,
    _chunking,
    _problems,
    _provenance,
)


def _in_sample_badge(report: Mapping[str, Any]) -> str:
    """The header line of a report with a fitted stage: IN-SAMPLE (warn), held out, or unknown."""
    from ragaudit.artifacts.in_sample import in_sample_flag

    flag = in_sample_flag(report)
    if flag is None:
        return ""
    state, text = flag
    tone, mark = {"in_sample": ("warn", "IN-SAMPLE"), "held_out": ("pass", "held out")}.get(
        state, ("warn", "fitted stage")
    )
    text = text.removeprefix("IN-SAMPLE: ").removeprefix("held out: ")
    return f'<p class="in-sample"><span class="badge {tone}">{esc(mark)}</span> {esc(text)}</p>'


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
    section = view.gate()
    verdict = gate_verdict(section)
    gate = ""
    if section is not None and verdict is not None:
        passed, gates = verdict
        state = gate_state(section, passed, gates)
        shown = [  # what keeps it from passing, and a pass that rests on a floor the policy lowered
            g
            for g in gates
            if g.state in ("fail", "not_verified") or any(POLICY_LOWERED in m for m in g.messages)
        ]
        detail = "; ".join(f"{g.name}: {' '.join(g.messages)}" for g in shown)
        badge = {"pass": ("pass", "gate passed"), "fail": ("fail", "gate FAILED")}.get(
            state, ("warn", "gate NOT VERIFIED")
        )
        gate = f'<p><span class="badge {badge[0]}">{badge[1]}</span> {esc(detail)}</p>'
    gate += _in_sample_badge(report)
    return (
        f'<header><div class="brand">ragaudit report</div><h1>{esc(view.title)}</h1>'
        f'<div class="sub">{" · ".join(bits)}</div>{gate}<nav>{nav}</nav></header>'
    )


def _case_data(view: ReportView) -> dict[str, Any]:
    return {
        "columns": _columns(view) if view.cases else [],
        "primary": view.primary_metric,
        "hasBaseline": view.baseline_label is not None,
        "baseline": view.baseline_label,
        "cases": view.cases,
    }


def _kind_sections(view: ReportView) -> list[Section]:
    """The kind's part: its document drawn (:func:`ragaudit.report.draw.html.draw_html`); a kind without
    one (a third party's older ``html`` hook) is shown as text, never as HTML: every built-in kind builds
    a document, so no kind's own HTML is trusted."""
    kind = view.report_kind()
    if kind is None:
        return []
    document = kind.document(kind.read(view))
    if document is not None:
        return draw_html(document)
    return [(esc(anchor), title, f"<pre>{esc(inner)}</pre>") for anchor, title, inner in kind.html(view)]


def render_html(view: ReportView) -> str:
    """The whole page as one string: the run's outcome (a kind's :data:`OUTCOME` section), the summary,
    the kind's other sections, then the page's own sections
    (queries, sweeps, missing and errors, provenance) that the kind's document does not already hold
    (the document wins: the eval kind shows its own ``problems``)."""
    own = _kind_sections(view)
    anchors = {anchor for anchor, _, _ in own}
    first = [s for s in own if s[0] == OUTCOME]  # how the run went, above its figures
    made = [
        *first,
        _summary(view),
        *(s for s in own if s[0] != OUTCOME),
        *(s for make in SECTIONS if (s := make(view)) is None or s[0] not in anchors),
    ]
    sections = [s for s in made if s is not None]
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
