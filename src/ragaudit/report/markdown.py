"""The Markdown report: compact enough for a pull-request comment.

Sections: gate verdict (when the report carries one), the metric table (mean, bootstrap CI, and with
a baseline the paired delta and Holm-corrected p), significant changes, security (cross-tenant
leaks), missing cases and errors, notes, and the provenance in a collapsed block. Experiment reports
get their own tables: compare, benchmark, ablation (variants and the remove-one / add-one gain of each
toggle), reranker-eval (before / after / oracle per metric, latency) and rewrite-eval (baseline /
rewrite per metric, constraint preservation, flagged rewrites). Every value taken from user data goes
through :func:`ragaudit.artifacts.escape.escape_md`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ragaudit.artifacts.escape import escape_md as md
from ragaudit.artifacts.tables import delta_ci_label
from ragaudit.report.sections import (
    ANALYSES,
    GATE_MARKS,
    captured_text,
    ci_text,
    constraint_verdict,
    gate_state,
    gate_verdict,
    leaks_text,
    ms_text,
    ms_value,
    wtl_text,
)
from ragaudit.report.sections import num as _num
from ragaudit.report.sections import signed as _signed
from ragaudit.report.view import ReportView

if TYPE_CHECKING:
    from ragaudit.report.kinds.ablation import AblationReport
    from ragaudit.report.kinds.benchmark import BenchmarkReport
    from ragaudit.report.kinds.eval import EvalReport
    from ragaudit.report.kinds.fields import Paired, Problems
    from ragaudit.report.kinds.reranker_eval import RerankerEvalReport
    from ragaudit.report.kinds.rewrite_eval import Constraints, RewriteEvalReport

MAX_K_COLUMNS = 10
SHOWN_KS = frozenset({1, 3, 5, 10, 20, 50, 100})
"""A longer k-sweep shows only these k (and the last) in Markdown; the HTML plot has every k."""
LIST_LIMIT = 10
"""At most this many leaks, errors or moved queries are listed; a line says how many more there are."""


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 1) -> list[str]:
    align = ["---" if i < numeric_from else "---:" for i in range(len(headers))]
    return [
        "| " + " | ".join(headers) + " |",
        "| " + " | ".join(align) + " |",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


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
                _num(c.p_value_corrected if c else None, 3),
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
            f"p = {_num(c.p_value_corrected, 3)}, {c.wins} queries better, {c.losses} worse"
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
            _num(c.p_value_corrected, 3),
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


def _significance(settings: tuple[Any, str], what: str) -> str:
    alpha, correction = settings
    return (
        f"bold Δ = significant at α = {md(alpha)} after {md(correction)} correction across {what} "
        "(paired randomization test)"
    )


def _ablation(report: AblationReport) -> list[str]:
    metrics = report.metrics
    k = md("k" if report.context_k is None else report.context_k)
    rows = [
        [
            md(v.name) + (f" (= {md(v.same_as)})" if v.same_as else ""),
            md(", ".join(v.on) or "–"),
            *(_num(v.metrics.get(m)) for m in metrics),
            _num(v.latency.p95 if v.latency else None, 1),
            _num(v.context_tokens, 0),
        ]
        for v in report.variants
    ]
    gains = report.gain_rows()
    gain_rows = [
        [md(g.toggle), md(g.metric), *(cell for a in ANALYSES for cell in _gain_cells(g.of(a)))]
        for g in gains
    ]
    inv = report.invariants
    ci = delta_ci_label([c.data for g in gains for a in ANALYSES if (c := g.of(a)) is not None], short=True)
    lines = [
        "**Variants**",
        "",
        *_table(["variant", "on", *map(md, metrics), "p95 ms", f"tokens@{k}"], rows, 2),
        "",
        "**Gains** of each toggle: remove-one = full − full without it, add-one = bare plus it − bare; "
        + _significance(report.significance, f"all {len(report.gains)} gains")
        + ".",
        "",
        *_table(
            ["toggle", "metric", "remove-one Δ", ci, "p (Holm)", "add-one Δ", ci, "p (Holm)"],
            gain_rows,
            2,
        ),
        "",
    ]
    if inv["same_for_every_variant"]:
        lines += [
            f"Every variant scored the same {md(_known(inv['cases']))} cases ({md(_known(inv['answerable']))} "
            f"answerable) under the same tenants at top_k {md(_known(inv['top_k']))}, same dataset and policy.",
            "",
        ]
    return lines


def _gain_cells(c: Paired | None) -> list[str]:
    if c is None:
        return ["–", "–", "–"]
    return [_delta(c), ci_text(c), _num(c.p_value_corrected, 3)]


def _reranker(report: RerankerEvalReport) -> list[str]:
    rows = [
        [
            md(r.comparison.metric),
            _num(r.before),
            _num(r.after),
            _delta(r.comparison),
            ci_text(r.comparison),
            _num(r.comparison.p_value_corrected, 3),
            wtl_text(r.comparison),
            _num(r.ceiling),
            captured_text(r.captured),
        ]
        for r in report.rows
    ]
    latency = report.latency
    recall = "recall" if report.recall_metric is None else report.recall_metric
    lines = [
        f"Reranker **{md(report.reranker)}** over the first stage's top {md(_known(report.top_n))}; "
        f"first-stage {md(recall)} = {_num(report.first_stage_recall)} (the share of the "
        "relevant chunks the reranker gets to reorder at all).",
        "",
        *_table(
            [
                "metric",
                "before",
                "after",
                "Δ",
                delta_ci_label([r.comparison.data for r in report.rows], short=True),
                "p (Holm)",
                "W/T/L",
                "oracle",
                "captured",
            ],
            rows,
        ),
        "",
        "oracle = the same candidates in the ideal order by grade; captured = (after − before) / (oracle − "
        f"before); {_significance(report.significance, 'the metrics')}.",
        "",
    ]
    if latency is not None:
        text = (
            f"Latency ({md(_known(latency.cases))} cases): first stage {ms_text(latency.first_stage)}; "
            f"the reranker adds {ms_text(latency.rerank_added)}"
        )
        cache = latency.cache
        if cache:
            text += f"; reranker cache {md(cache.get('hits', 0))} hits, {md(cache.get('misses', 0))} misses"
        lines += [text + ".", ""]
    return lines


def _constraints_line(cons: Constraints, primary: str) -> str:
    head = f"**Constraints:** {md(_known(cons.rewritten))} of {md(_known(cons.cases))} queries rewritten; "
    verdict = constraint_verdict(cons.data)
    if verdict.state == "pass":
        return head + f"✅ no rewrite lost an entity or constraint ({md(verdict.reason)})."
    if verdict.state == "not_verified":
        return head + f"⚠️ constraint preservation NOT VERIFIED: {md(verdict.reason)}."
    lost = ", ".join(f"{md(kind)} {md(n)}" for kind, n in cons.lost_by_kind.items()) or "none"
    return (
        head + f"❌ {md(cons.flagged)} flagged (lost an entity or constraint), "
        f"{md(cons.flagged_with_gain or 0)} of them although {md(primary)} improved; lost by kind: {lost}; "
        f"swaps {md(cons.swapped or 0)}."
    )


def _rewrite(report: RewriteEvalReport) -> list[str]:
    primary = report.primary_metric
    rows = [
        [
            md(r.metric),
            _num(r.baseline),
            _num(r.rewrite),
            _delta(r.comparison) if r.comparison else _signed(r.delta),
            ci_text(r.comparison),
            _num(r.comparison.p_value_corrected if r.comparison else None, 3),
            wtl_text(r.comparison),
        ]
        for r in report.metrics
    ]
    latency, flagged = report.latency, report.flagged
    lines = [
        f"Rewriter **{md(report.rewriter)}**; primary metric {md(primary)}; "
        + _significance(report.significance, "the metrics")
        + ".",
        "",
        *_table(
            [
                "metric",
                "baseline",
                "rewrite",
                "Δ",
                delta_ci_label([c.data for c in report.comparisons], short=True),
                "p (Holm)",
                "W/T/L",
            ],
            rows,
        ),
        "",
        _constraints_line(report.constraints, primary),
        "",
    ]
    if latency is not None:
        lines += [
            f"Latency: baseline {ms_text(latency.baseline)}; with the rewrite "
            f"{ms_text(latency.rewrite)}; added per query {ms_text(latency.added)}; "
            f"in the rewriter {ms_text(latency.rewriter)}.",
            "",
        ]
    if flagged:
        shown = [
            [
                md(f.id),
                md(f.query, 80),
                md(f.rewritten if f.rewritten is not None else "(no rewrite)", 80),
                md("; ".join([*f.lost_text(), *f.swapped_text()])),
                _signed(f.delta, 3),
            ]
            for f in flagged[:LIST_LIMIT]
        ]
        lines += [
            f"**Flagged rewrites ({len(flagged)})**, whatever their metrics say:",
            "",
            *_table(["case", "query", "rewritten", "lost", f"Δ {md(primary)}"], shown, 4),
            *_more(len(flagged)),
            "",
        ]
    return lines


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


def render_markdown(view: ReportView) -> str:
    """The Markdown report of any report kind: the gate, the kind's own lines
    (:meth:`ragaudit.report.kinds.ReportKind.markdown`), the sweeps, missing cases and errors, provenance."""
    kind = view.report_kind()
    from ragaudit.artifacts.in_sample import in_sample_flag

    lines = [f"### ragaudit {md(view.kind)}: {md(view.title)}", "", *_gate(view)]
    if (flag := in_sample_flag(view.report)) is not None:
        state, text = flag
        lines += [f"_{md(text)}_" if state == "held_out" else f"**⚠️ {md(text)}**", ""]
    lines += kind.markdown(view) if kind else []
    lines += _sweeps(view)
    if kind is None or not kind.problems_in_body:
        lines += _problems(view.problems())
    return "\n".join([*lines, *_provenance(view)]) + "\n"
