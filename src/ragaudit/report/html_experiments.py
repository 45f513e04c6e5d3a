"""HTML sections of the experiment reports: benchmark, compare, ablation, reranker-eval, rewrite-eval."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ragaudit.artifacts.escape import escape_html as esc
from ragaudit.artifacts.tables import delta_ci_label
from ragaudit.report.html_parts import (
    Section,
    card,
    comparison_table,
    delta_html,
    forest,
    html_table,
    interval,
)
from ragaudit.report.sections import (
    ANALYSES,
    ablation_gains,
    captured_text,
    ci_text,
    constraint_verdict,
    leaks_text,
    ms_pair,
    part,
    records,
    rewrite_flagged,
    rewrite_metric_rows,
    significance,
    wtl_text,
)
from ragaudit.report.sections import num as _num
from ragaudit.report.sections import signed as _signed
from ragaudit.report.svg import forest_plot, grouped_bars
from ragaudit.report.view import ReportView

if TYPE_CHECKING:
    from ragaudit.report.kinds.benchmark import BenchmarkReport
    from ragaudit.report.kinds.compare import CompareReport


def benchmark_section(report: BenchmarkReport) -> Section:
    metrics = report.metric_names
    series = [(p.name, [p.metrics.get(m) for m in metrics]) for p in report.pipelines]
    rows = [
        [
            esc(p.name),
            *(_num(p.metrics.get(m)) for m in metrics),
            _num(p.latency.p95 if p.latency else None, 1),
            _num(p.build_seconds, 2),
            esc(leaks_text(p.data)),
        ]
        for p in report.pipelines
    ]
    table = html_table(["pipeline", *map(esc, metrics), "p95 ms", "build s", "leaks"], rows)
    comparisons = [c.data for c in report.comparisons]
    body = grouped_bars(metrics, series, "pipelines side by side") + table
    if comparisons:
        body += f"<h3>Against {esc(report.baseline or '')}</h3>" + forest(comparisons, True)
        body += comparison_table(comparisons, True)
    return "benchmark", "Benchmark", body


def compare_section(report: CompareReport) -> Section:
    rows = [c.data for c in report.comparisons]
    hint = (
        f'<p class="hint">Baseline <b>{esc(report.baseline or "")}</b>; significant at α = '
        f"{esc(report.alpha)} after {esc(report.correction or '')} correction.</p>"
    )
    return "compare", "Comparison", hint + forest(rows, True) + comparison_table(rows, True)


def significance_hint(report: Mapping[str, Any], what: str) -> str:
    alpha, correction = significance(report)
    return (
        f"paired randomization test, {esc(correction)} correction across {what}, α = {esc(alpha)}; "
        "blue points and bold deltas are significant"
    )


def gain_cells(c: Mapping[str, Any] | None) -> list[str]:
    if c is None:
        return ["–", "–", "–"]
    return [delta_html(c), ci_text(c), _num(c.get("p_value_corrected"), 3)]


def ablation_section(view: ReportView) -> Section:
    report = view.report
    metrics = [str(m) for m in report.get("metrics", []) or []]
    gains = ablation_gains(report)
    intervals = [
        interval(f"{g['toggle']} · {analysis.removesuffix('-one')} · {g['metric']}", g[analysis])
        for g in gains
        for analysis in ANALYSES
        if g[analysis] is not None
    ]
    gain_rows = [
        [esc(g["toggle"]), esc(g["metric"]), *(cell for a in ANALYSES for cell in gain_cells(g[a]))]
        for g in gains
    ]
    ci = esc(delta_ci_label([g[a] for g in gains for a in ANALYSES if isinstance(g.get(a), Mapping)], True))
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
        f"own); the plot labels them remove and add. {significance_hint(report, f'all {len(intervals)} gains')}.</p>"
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
        + html_table(
            ["toggle", "metric", "remove-one Δ", ci, "p (Holm)", "add-one Δ", ci, "p (Holm)"],
            gain_rows,
            2,
        )
        + "<h3>Variants</h3>"
        + html_table(
            ["variant", "on", *map(esc, metrics), "p95 ms", f"tokens@{esc(report.get('context_k', 'k'))}"],
            variant_rows,
            2,
        )
        + invariants
    )
    return "ablation", "Ablation", body


def reranker_section(view: ReportView) -> Section:
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
            delta_html(r),
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
        card(f"first-stage {recall.get('metric', 'recall')}", _num(recall.get("value"))),
        card("candidates reranked", str(report.get("top_n", "–"))),
    ]
    if latency:
        cards += [
            card("first stage, p50 / p95", ms_pair(latency.get("first_stage"))),
            card("the reranker adds, p50 / p95", ms_pair(latency.get("rerank_added"))),
        ]
    if cache:
        cards.append(
            card("reranker cache hits / misses", f"{cache.get('hits', 0)} / {cache.get('misses', 0)}")
        )
    hint = (
        f'<p class="hint">Reranker <b>{esc(report["reranker"])}</b> reorders the first stage\'s top '
        f"{esc(report.get('top_n', '?'))}: <b>before</b> is the first-stage order, <b>after</b> the reranked "
        "order, <b>oracle</b> the same candidates in the ideal order by grade (the best any reranker can "
        "do); captured = (after − before) / (oracle − before). "
        f"{significance_hint(report, 'the metrics')}.</p>"
    )
    body = (
        hint
        + f'<div class="cards">{"".join(cards)}</div>'
        + grouped_bars(names, series, "before, after and oracle per metric")
        + html_table(
            [
                "metric",
                "before",
                "after",
                "Δ",
                esc(delta_ci_label(summary, True)),
                "p (Holm)",
                "W/T/L",
                "oracle",
                "captured",
            ],
            rows,
        )
        + forest_plot(
            [interval(n, r) for n, r in zip(names, summary, strict=True)], "reranker gain per metric"
        )
    )
    return "reranker", "Reranker", body


def rewrite_section(view: ReportView) -> Section:
    report = view.report
    primary = str(report.get("primary_metric", ""))
    metric_rows = rewrite_metric_rows(report)
    rows = [
        [
            esc(r["metric"]),
            _num(r["baseline"]),
            _num(r["rewrite"]),
            delta_html(r["comparison"]) if r["comparison"] else _signed(r["delta"]),
            ci_text(r["comparison"]),
            _num((r["comparison"] or {}).get("p_value_corrected"), 3),
            esc(wtl_text(r["comparison"])),
        ]
        for r in metric_rows
    ]
    compared = [(r["metric"], r["comparison"]) for r in metric_rows if r["comparison"]]
    cons, latency = report["constraints"], part(report, "latency_ms")
    flagged_count = cons.get("flagged", 0)
    cards = [
        card("queries rewritten", f"{cons.get('rewritten', '–')} of {cons.get('cases', '–')}"),
        card(
            "flagged (lost a constraint)",
            str(flagged_count),
            {"pass": "good", "fail": "bad", "not_verified": "warn"}[constraint_verdict(cons).state],
        ),
        card(f"flagged although {primary} improved", str(cons.get("flagged_with_gain", 0))),
        card("swaps", str(cons.get("swapped", 0)), "bad" if cons.get("swapped") else ""),
    ]
    if latency:
        cards += [
            card("added per query, p50 / p95", ms_pair(latency.get("added"))),
            card("in the rewriter, p50 / p95", ms_pair(latency.get("rewriter"))),
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
        f'<p class="hint">Rewriter <b>{esc(report["rewriter"])}</b> against the same pipeline without '
        f"it, case by case; primary metric {esc(primary)}. {significance_hint(report, 'the metrics')}.</p>"
    )
    body = (
        hint
        + forest_plot([interval(m, c) for m, c in compared], "rewrite minus baseline per metric")
        + html_table(
            [
                "metric",
                "baseline",
                "rewrite",
                "Δ",
                esc(delta_ci_label([c for _, c in compared], True)),
                "p (Holm)",
                "W/T/L",
            ],
            rows,
        )
        + "<h3>Constraint preservation</h3>"
        + f'<div class="cards">{"".join(cards)}</div>'
        + (f'<p class="hint">Lost by kind: {esc(lost)}.</p>' if lost else "")
    )
    if flagged:
        body += (
            f'<h3>Flagged rewrites ({len(flagged)})</h3><p class="hint">The rewrite lost an entity or '
            "constraint of the question: flagged whatever its metrics say.</p>"
            + html_table(
                ["case", "tenant", "query", "rewritten", "lost", "swapped", f"Δ {esc(primary)}"],
                flagged_rows,
                6,
            )
        )
    else:
        verdict = constraint_verdict(cons)
        body += (
            '<p class="ok-line">✓ No rewrite lost an entity or constraint of its question '
            f"({esc(verdict.reason)}).</p>"
            if verdict.state == "pass"
            else f'<p class="warn-line">{verdict.mark} Constraint preservation NOT VERIFIED: {esc(verdict.reason)}.</p>'
        )
    return "rewrite", "Rewrite", body
