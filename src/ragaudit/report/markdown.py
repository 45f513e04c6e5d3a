"""The Markdown report page: compact enough for a pull-request comment.

The page loop (:func:`render_markdown`): a heading, the gate verdict (when the report carries one),
the kind's part (its document drawn by :func:`ragaudit.report.draw.markdown.draw_markdown`), a report's
own ``k_sweep`` / ``chunking`` sections, missing cases, errors and notes, and the provenance in a
collapsed block. Below it, still here, the sections of the kinds not yet drawn through a document
(eval: metrics, changes, security; compare and benchmark tables), which escape with
:func:`ragaudit.artifacts.escape.escape_md` themselves.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ragaudit.artifacts.escape import escape_md as md
from ragaudit.artifacts.tables import delta_ci_label, fmt_p
from ragaudit.report.draw.markdown import draw_markdown, table_lines
from ragaudit.report.kinds import is_builtin
from ragaudit.report.sections import (
    GATE_MARKS,
    ci_text,
    gate_state,
    gate_verdict,
    leaks_text,
    ms_value,
    wtl_text,
)
from ragaudit.report.sections import num as _num
from ragaudit.report.sections import signed as _signed
from ragaudit.report.view import ReportView

if TYPE_CHECKING:
    from ragaudit.report.kinds.benchmark import BenchmarkReport
    from ragaudit.report.kinds.eval import EvalReport
    from ragaudit.report.kinds.fields import Paired, Problems

MAX_K_COLUMNS = 10
SHOWN_KS = frozenset({1, 3, 5, 10, 20, 50, 100})
"""A longer k-sweep shows only these k (and the last) in Markdown; the HTML plot has every k."""
LIST_LIMIT = 10
"""At most this many leaks, errors or moved queries are listed; a line says how many more there are."""


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 1) -> list[str]:
    """A table of escaped cells, columns from ``numeric_from`` on right-aligned (the back-end's table)."""
    return table_lines(headers, rows, [i >= numeric_from for i in range(len(headers))])


def _more(total: int) -> list[str]:
    return [f"- … and {total - LIST_LIMIT} more"] if total > LIST_LIMIT else []


def _gate(view: ReportView) -> list[str]:
    gate = view.gate()
    verdict = gate_verdict(gate)
    if gate is None or verdict is None:
        return []
    passed, gates = verdict
    state = gate_state(gate, passed, gates)
    head = {"pass": "✅ PASSED", "fail": "❌ FAILED", "not_verified": "⚠️ NOT VERIFIED"}[state]
    lines = [f"**Gate: {head}**" + ("" if passed or state != "not_verified" else " (blocks the release)"), ""]
    for g in gates:
        mark = GATE_MARKS.get(g.state, "❌")
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
        c = m.comparison
        delta = _signed(c.delta if c else None)
        if c is not None and c.significant:
            delta = f"**{delta}** {'▲' if c.delta is not None and c.delta > 0 else '▼'}"
        rows.append(
            [
                md(m.name),
                _num(c.baseline_mean if c else None),
                _num(m.value),
                f"[{_num(m.ci[0], 3)}, {_num(m.ci[1], 3)}]" if m.ci else "–",
                delta,
                md(fmt_p(c.p_value_corrected if c else None, prefix=False)),
                wtl_text(c),
            ]
        )
    return _table(
        [
            "metric",
            f"baseline ({md(view.baseline_label)})",
            "this run",
            f"{pct} of mean (unadjusted)",
            "Δ",
            "p (Holm)",
            "W/T/L",
        ],
        rows,
    )


def _counts(report: EvalReport) -> list[str]:
    c = report.counts
    parts = [
        f"{c.cases} cases: {c.answerable} answerable (averaged), {c.unanswerable} unanswerable (excluded), "
        f"{c.missing} missing and {c.errors} errors (scored 0)"
    ]
    if report.latency is not None:
        basis = f" ({md(report.latency_basis)})" if report.latency_basis else ""
        parts.append(
            f"latency p50 {_num(report.latency.p50, 1)} ms, p95 {_num(report.latency.p95, 1)} ms{basis}"
        )
    return [" · ".join(parts)]


def _changes(view: ReportView) -> list[str]:
    if view.comparison is None:
        return []
    base = md(view.baseline_label or "baseline")
    rows = view.comparisons
    head = (
        f"paired randomization test, Holm-corrected across {len(rows)} metrics, α = {view.alpha:g}; "
        f"intervals: {delta_ci_label([c.data for c in rows])}"
    )
    significant = view.significant()
    if not significant:
        return [f"**No significant change against {base}** ({head}).", ""]
    lines = [f"**Significant changes against {base}** ({head}):", ""]
    for c in significant:
        lo, hi = c.ci if c.ci is not None else (None, None)
        lines.append(
            f"- {md(c.metric)}: {_signed(c.delta)} [{_signed(lo, 3)}, {_signed(hi, 3)}], "
            f"{fmt_p(c.p_value_corrected)}, {c.wins} queries better, {c.losses} worse"
        )
    primary = next((c for c in significant if c.metric == view.primary_metric), significant[0])
    for moved, word in ((primary.most_regressed, "most regressed"), (primary.most_improved, "most improved")):
        if moved:
            shown = ", ".join(f"{md(m['id'])} ({_signed(m['delta'], 3)})" for m in moved)
            lines.append(f"- {word} on {md(primary.metric)}: {shown}")
    return [*lines, ""]


SECURITY_MARKS = {"pass": "✅", "fail": "❌", "not_verified": "⚠️"}
"""Only a verified pass gets a check mark."""


def _security(view: ReportView) -> list[str]:
    verdict = view.isolation()
    if verdict is None:
        return []
    mark = SECURITY_MARKS[verdict.state]
    if verdict.state == "pass":
        return [f"**Security:** {mark} tenant isolation verified: {md(verdict.reason, 400)}.", ""]
    if verdict.state == "not_verified":
        return [f"**Security: {mark} tenant isolation NOT VERIFIED:** {md(verdict.reason, 400)}.", ""]
    leaks = view.leaks()
    cases = len({leak.case_id for leak in leaks})
    lines = [
        f"**Security: {mark} {len(leaks)} cross-tenant chunk(s) returned in {cases} case(s): a release blocker.**",
        "",
        f"Tenant isolation FAILED: {md(verdict.reason, 400)}.",
        "",
    ]
    rows = [
        [
            md(leak.case_id),
            md(leak.chunk_id),
            str(leak.rank),
            md(leak.claimed_tenant or "(unlabelled)"),
            md(leak.caller_tenant),
        ]
        for leak in leaks[:LIST_LIMIT]
    ]
    if not rows:
        return lines
    return [*lines, *_table(["case", "chunk", "rank", "owner", "asked as"], rows, 2), *_more(len(leaks)), ""]


def _problems(problems: Problems) -> list[str]:
    lines: list[str] = []
    missing = problems.missing
    if missing:
        shown = ", ".join(md(m) for m in missing[:LIST_LIMIT])
        extra = f" … and {len(missing) - LIST_LIMIT} more" if len(missing) > LIST_LIMIT else ""
        lines.append(f"**Missing from the run ({len(missing)}, scored 0):** {shown}{extra}")
        lines.append("")
    errors = problems.errors
    if errors:
        lines.append(f"**Errors ({len(errors)}, scored 0):**")
        lines.append("")
        lines += [f"- {md(cid)}: {md(error, 200)}" for cid, error in errors[:LIST_LIMIT]]
        lines += [*_more(len(errors)), ""]
    notes = problems.notes
    if notes:
        lines += [f"- note: {md(n, 300)}" for n in notes[:LIST_LIMIT]] + _more(len(notes)) + [""]
    return lines


def _provenance(view: ReportView) -> list[str]:
    rows = [[f"**{md(label)}**", md(text)] for label, text in view.provenance()]
    return [
        "<details><summary>Provenance</summary>",
        "",
        *_table(["field", "value"], rows, 2),
        "",
        "</details>",
    ]


def _delta(c: Paired | None) -> str:
    """A paired delta, bold when significant."""
    if c is None:
        return "–"
    return f"**{_signed(c.delta)}**" if c.significant else _signed(c.delta)


def _comparisons(rows: Sequence[Paired]) -> list[str]:
    table = [
        [
            md(c.metric),
            md(c.system),
            _num(c.baseline_mean),
            _num(c.system_mean),
            _delta(c),
            ci_text(c),
            md(fmt_p(c.p_value_corrected, prefix=False)),
            md(wtl_text(c)),
        ]
        for c in rows
    ]
    ci = delta_ci_label([c.data for c in rows])
    headers = ["metric", "system", "baseline", "system", "Δ", ci, "p (Holm)", "W/T/L"]
    return _table(headers, table, 2)


def _benchmark(report: BenchmarkReport) -> list[str]:
    r"""The recommendation, then the pipelines ranked (winner ★, best value per metric bold, \* when
    significantly different from the baseline, Δ against the winner), with cost and tenant isolation."""
    metrics, ranking = report.metric_names, report.ranking
    best = {
        m: max((v for p in report.pipelines if isinstance(v := p.metrics.get(m), (int, float))), default=None)
        for m in metrics
    }
    rows = []
    for rank, p in enumerate(report.ranked(), start=1):
        star = "★ " if ranking is not None and p.name == ranking.winner else ""
        cells = [str(rank), star + md(p.name)]
        for m in metrics:
            value, top = p.metrics.get(m), best[m]
            text = _num(value) + (" \\*" if report.significant(p.name, m) else "")
            bold = top is not None and isinstance(value, (int, float)) and value >= top - 1e-12
            cells.append(f"**{text}**" if bold else text)
        if ranking is not None:
            c = ranking.against(p.name)
            cells.append("winner" if p.name == ranking.winner else _winner_delta(c))
        latency = p.latency
        cells += [
            ms_value(latency.p50 if latency else None),
            ms_value(latency.p95 if latency else None),
            md(p.build_text()),
            md(leaks_text(p.data)),
        ]
        rows.append(cells)
    baseline = report.baseline if report.baseline is not None else "the baseline"
    headers = ["#", "pipeline", *[md(m) for m in metrics]]
    headers += [f"Δ {md(ranking.metric)} vs winner"] if ranking is not None else []
    headers += ["p50 ms", "p95 ms", "build", "leaks"]
    advice = report.recommendation()
    bases = "; ".join(report.latency_bases())
    return [
        *([f"**Recommendation:** {md(advice)}", ""] if advice else []),
        *_table(headers, rows, 2),
        "",
        f"Every pipeline ran the same {_known(report.cases)} cases at top_k {_known(report.top_k)}; "
        f"\\* = significantly different from {md(baseline)} (paired randomization test, Holm-corrected)"
        + (f"; latency {md(bases)}." if bases else "."),
        "",
    ]


def _winner_delta(c: Paired | None) -> str:
    if c is None:
        return "–"
    mark = " \\*" if c.significant else " (n.s.)"
    return _signed(c.delta, 3) + mark


def _known(value: object) -> str:
    return "?" if value is None else str(value)


def _sweeps(view: ReportView) -> list[str]:
    lines: list[str] = []
    sweep = view.k_sweep()
    if sweep is not None:
        ks = list(sweep["k"])
        keep = [i for i, k in enumerate(ks) if len(ks) <= MAX_K_COLUMNS or k in SHOWN_KS or i == len(ks) - 1]
        rows = [
            [md(s.get("name", "")), *(_num(s["values"][i]) if i < len(s["values"]) else "–" for i in keep)]
            for s in sweep.get("series", [])
            if isinstance(s, Mapping) and isinstance(s.get("values"), list)
        ]
        lines += ["**Metrics by k**", "", *_table(["series", *[f"k={ks[i]}" for i in keep]], rows), ""]
    chunking = view.chunking()
    if chunking is not None:
        chunk_rows = [r for r in chunking["rows"] if isinstance(r, Mapping)]
        metrics = list(dict.fromkeys(m for r in chunk_rows for m in r.get("metrics", {})))
        rows = [
            [md(r.get("label", "")), *(_num(r["metrics"].get(m)) for m in metrics), str(r.get("chunks", "–"))]
            for r in chunk_rows
        ]
        lines += ["**Chunking**", "", *_table(["chunking", *[md(m) for m in metrics], "chunks"], rows), ""]
    return lines


def _kind_lines(view: ReportView) -> list[str]:
    """The kind's part: its document drawn (:func:`ragaudit.report.draw.markdown.draw_markdown`), else
    the older ``markdown`` hook of a built-in kind; a third-party kind's hook output is shown as text."""
    kind = view.report_kind()
    if kind is None:
        return []
    document = kind.document(kind.read(view))
    if document is not None:
        return draw_markdown(document)
    lines = kind.markdown(view)
    return lines if is_builtin(kind) else [md(line) for line in lines]


def render_markdown(view: ReportView) -> str:
    """The Markdown report of any report kind: the gate, the kind's part (:func:`_kind_lines`), the
    sweeps, missing cases and errors, provenance."""
    kind = view.report_kind()
    from ragaudit.artifacts.in_sample import in_sample_flag

    lines = [f"### ragaudit {md(view.kind)}: {md(view.title)}", "", *_gate(view)]
    if (flag := in_sample_flag(view.report)) is not None:
        state, text = flag
        lines += [f"_{md(text)}_" if state == "held_out" else f"**⚠️ {md(text)}**", ""]
    lines += _kind_lines(view)
    lines += _sweeps(view)
    if kind is None or not kind.problems_in_body:
        lines += _problems(view.problems())
    return "\n".join([*lines, *_provenance(view)]) + "\n"
