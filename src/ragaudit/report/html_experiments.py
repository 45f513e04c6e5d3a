"""HTML sections of the experiment reports: compare, ablation, reranker-eval, rewrite-eval (benchmark:
:mod:`ragaudit.report.html_benchmark`)."""

from __future__ import annotations

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
    captured_text,
    ci_text,
    constraint_verdict,
    ms_pair,
    wtl_text,
)
from ragaudit.report.sections import num as _num
from ragaudit.report.sections import signed as _signed
from ragaudit.report.svg import dot_plot, forest_plot

if TYPE_CHECKING:
    from ragaudit.report.kinds.ablation import AblationReport
    from ragaudit.report.kinds.compare import CompareReport
    from ragaudit.report.kinds.fields import Paired
    from ragaudit.report.kinds.reranker_eval import RerankerEvalReport
    from ragaudit.report.kinds.rewrite_eval import RewriteEvalReport


def compare_section(report: CompareReport) -> Section:
    rows = report.comparisons
    hint = (
        f'<p class="hint">Baseline <b>{esc(report.baseline or "")}</b>; significant at α = '
        f"{esc(report.alpha)} after {esc(report.correction or '')} correction.</p>"
    )
    return "compare", "Comparison", hint + forest(rows, True) + comparison_table(rows, True)


def significance_hint(settings: tuple[Any, str], what: str) -> str:
    alpha, correction = settings
    return (
        f"paired randomization test, {esc(correction)} correction across {what}, α = {esc(alpha)}; "
        "blue points and bold deltas are significant"
    )


def gain_cells(c: Paired | None) -> list[str]:
    if c is None:
        return ["–", "–", "–"]
    return [delta_html(c), ci_text(c), _num(c.p_value_corrected, 3)]


def ablation_section(report: AblationReport) -> Section:
    metrics = report.metrics
    gains = report.gain_rows()
    intervals = [
        interval(f"{g.toggle} · {analysis.removesuffix('-one')} · {g.metric}", c)
        for g in gains
        for analysis in ANALYSES
        if (c := g.of(analysis)) is not None
    ]
    gain_rows = [
        [esc(g.toggle), esc(g.metric), *(cell for a in ANALYSES for cell in gain_cells(g.of(a)))]
        for g in gains
    ]
    ci = esc(delta_ci_label([c.data for g in gains for a in ANALYSES if (c := g.of(a)) is not None], True))
    variant_rows = [
        [
            esc(v.name) + (f" <span class='hint'>= {esc(v.same_as)}</span>" if v.same_as else ""),
            esc(", ".join(v.on) or "–"),
            *(_num(v.metrics.get(m)) for m in metrics),
            _num(v.latency.p95 if v.latency else None, 1),
            _num(v.context_tokens, 0),
        ]
        for v in report.variants
    ]
    hint = (
        '<p class="hint">Gain = metric with the toggle − without it. <b>remove-one</b>: the full pipeline '
        "against the full pipeline without the toggle (what it adds on top of everything else); "
        "<b>add-one</b>: the bare pipeline plus the toggle against the bare pipeline (what it adds on its "
        f"own); the plot labels them remove and add. {significance_hint(report.significance, f'all {len(intervals)} gains')}.</p>"
    )
    inv = report.invariants
    invariants = (
        f'<p class="ok-line">✓ Every variant scored the same {esc(_known(inv["cases"]))} cases '
        f"({esc(_known(inv['answerable']))} answerable) under the same tenants at top_k "
        f"{esc(_known(inv['top_k']))}, same dataset and policy.</p>"
        if inv["same_for_every_variant"]
        else ""
    )
    k = "k" if report.context_k is None else report.context_k
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
            ["variant", "on", *map(esc, metrics), "p95 ms", f"tokens@{esc(k)}"],
            variant_rows,
            2,
        )
        + invariants
    )
    return "ablation", "Ablation", body


def _known(value: object) -> object:
    return "?" if value is None else value


def reranker_section(report: RerankerEvalReport) -> Section:
    names = [r.comparison.metric for r in report.rows]
    series = [
        ("before", [r.before for r in report.rows]),
        ("after", [r.after for r in report.rows]),
        ("oracle", [r.ceiling for r in report.rows]),
    ]
    rows = [
        [
            esc(r.comparison.metric),
            _num(r.before),
            _num(r.after),
            delta_html(r.comparison),
            ci_text(r.comparison),
            _num(r.comparison.p_value_corrected, 3),
            esc(wtl_text(r.comparison)),
            _num(r.ceiling),
            captured_text(r.captured),
        ]
        for r in report.rows
    ]
    latency = report.latency
    recall = "recall" if report.recall_metric is None else report.recall_metric
    cards = [
        card(f"first-stage {recall}", _num(report.first_stage_recall)),
        card("candidates reranked", str("–" if report.top_n is None else report.top_n)),
    ]
    if latency is not None:
        cards += [
            card("first stage, p50 / p95", ms_pair(latency.first_stage)),
            card("the reranker adds, p50 / p95", ms_pair(latency.rerank_added)),
        ]
        if latency.cache:
            hits, misses = (latency.cache.get(k, 0) for k in ("hits", "misses"))
            cards.append(card("reranker cache hits / misses", f"{hits} / {misses}"))
    hint = (
        f'<p class="hint">Reranker <b>{esc(report.reranker)}</b> reorders the first stage\'s top '
        f"{esc(_known(report.top_n))}: <b>before</b> is the first-stage order, <b>after</b> the reranked "
        "order, <b>oracle</b> the same candidates in the ideal order by grade (the best any reranker can "
        "do); captured = (after − before) / (oracle − before). "
        f"{significance_hint(report.significance, 'the metrics')}.</p>"
    )
    body = (
        hint
        + f'<div class="cards">{"".join(cards)}</div>'
        + dot_plot(names, series, "before, after and oracle per metric, axes scaled to the data", "after")
        + html_table(
            [
                "metric",
                "before",
                "after",
                "Δ",
                esc(delta_ci_label([r.comparison.data for r in report.rows], True)),
                "p (Holm)",
                "W/T/L",
                "oracle",
                "captured",
            ],
            rows,
        )
        + forest_plot(
            [interval(r.comparison.metric, r.comparison) for r in report.rows], "reranker gain per metric"
        )
    )
    return "reranker", "Reranker", body


def rewrite_section(report: RewriteEvalReport) -> Section:
    primary = report.primary_metric
    rows = [
        [
            esc(r.metric),
            _num(r.baseline),
            _num(r.rewrite),
            delta_html(r.comparison) if r.comparison else _signed(r.delta),
            ci_text(r.comparison),
            _num(r.comparison.p_value_corrected if r.comparison else None, 3),
            esc(wtl_text(r.comparison)),
        ]
        for r in report.metrics
    ]
    compared = [(r.metric, r.comparison) for r in report.metrics if r.comparison]
    cons, latency = report.constraints, report.latency
    verdict = constraint_verdict(cons.data)
    cards = [
        card("queries rewritten", f"{_or(cons.rewritten, '–')} of {_or(cons.cases, '–')}"),
        card(
            "flagged (lost a constraint)",
            str(_or(cons.flagged, 0)),
            {"pass": "good", "fail": "bad", "not_verified": "warn"}[verdict.state],
        ),
        card(f"flagged although {primary} improved", str(_or(cons.flagged_with_gain, 0))),
        card("swaps", str(_or(cons.swapped, 0)), "bad" if cons.swapped else ""),
    ]
    if latency is not None:
        cards += [
            card("added per query, p50 / p95", ms_pair(latency.added)),
            card("in the rewriter, p50 / p95", ms_pair(latency.rewriter)),
        ]
    lost = ", ".join(f"{kind} {n}" for kind, n in cons.lost_by_kind.items())
    flagged = report.flagged
    flagged_rows = [
        [
            esc(f.id),
            esc(f.tenant_id or ""),
            esc(f.query),
            esc(f.rewritten if f.rewritten is not None else "(no rewrite)"),
            "<br>".join(esc(x) for x in f.lost_text()) or "–",
            "<br>".join(esc(x) for x in f.swapped_text()) or "–",
            _signed(f.delta, 3),
        ]
        for f in flagged
    ]
    hint = (
        f'<p class="hint">Rewriter <b>{esc(report.rewriter)}</b> against the same pipeline without '
        f"it, case by case; primary metric {esc(primary)}. {significance_hint(report.significance, 'the metrics')}.</p>"
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
                esc(delta_ci_label([c.data for _, c in compared], True)),
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
        body += (
            '<p class="ok-line">✓ No rewrite lost an entity or constraint of its question '
            f"({esc(verdict.reason)}).</p>"
            if verdict.state == "pass"
            else f'<p class="warn-line">{verdict.mark} Constraint preservation NOT VERIFIED: {esc(verdict.reason)}.</p>'
        )
    return "rewrite", "Rewrite", body


def _or(value: object, default: object) -> object:
    return default if value is None else value
