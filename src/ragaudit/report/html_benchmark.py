"""HTML sections of the ``benchmark`` report (``ragaudit bench``, and the page ``ragaudit demo`` opens on):
the recommendation in words, the pipelines ranked with the winner and significance marked, cost and
tenant isolation per pipeline, a dot plot on an axis scaled to the data, and the paired comparisons
against the baseline and against the winner."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ragaudit.artifacts.escape import escape_html as esc
from ragaudit.artifacts.tables import fmt_p
from ragaudit.report.html_parts import Section, comparison_table, forest
from ragaudit.report.sections import ms_value
from ragaudit.report.sections import num as _num
from ragaudit.report.sections import signed as _signed
from ragaudit.report.svg import dot_plot

if TYPE_CHECKING:
    from ragaudit.report.kinds.benchmark import BenchmarkReport, BenchPipeline
    from ragaudit.report.kinds.fields import Paired

ISOLATION = {
    "pass": ("pass", "✓ verified"),
    "fail": ("fail", "✗ leaks"),
    "not_verified": ("warn", "? not verified"),
}
"""Badge class and text of each tenant-isolation state (only a pass gets a check mark)."""


def _name_cell(report: BenchmarkReport, p: BenchPipeline) -> str:
    page = (report.pages or {}).get(p.name)
    name = f'<a href="{esc(page)}">{esc(p.name)}</a>' if page else esc(p.name)
    ranking = report.ranking
    if ranking is not None and p.name == ranking.winner:
        name = f'<span class="winner" title="highest {esc(ranking.metric)}">★ {name}</span>'
    if p.name == report.baseline:
        name += ' <span class="pill">baseline</span>'
    return name


def _metric_cell(report: BenchmarkReport, p: BenchPipeline, metric: str, best: float | None) -> str:
    value = p.metrics.get(metric)
    text = _num(value)
    c = report.against_baseline(p.name, metric)
    if c is not None and c.significant:
        arrow = "▲" if (c.delta or 0) > 0 else "▼"
        tone = "up" if (c.delta or 0) > 0 else "down"
        text += f'<span class="{tone} sig" title="significantly different from {esc(report.baseline or "")}">{arrow}</span>'
    if best is not None and isinstance(value, (int, float)) and value >= best - 1e-12:
        text = f"<b>{text}</b>"
    return text


def _p_text(p: float | None) -> str:
    """``p = 0.493``, ``p < 0.001`` (a randomization p is never exactly 0), or ``p –`` (:func:`fmt_p`)."""
    return fmt_p(p)


def mean_ci(pipeline: Mapping[str, Any], metric: str) -> tuple[float, float] | None:
    """A pipeline's 95% CI of ``metric``'s mean as the benchmark report records it (``metrics_ci``)."""
    cis = pipeline.get("metrics_ci")
    pair = cis.get(metric) if isinstance(cis, Mapping) else None
    if isinstance(pair, (list, tuple)) and len(pair) == 2 and all(isinstance(v, (int, float)) for v in pair):
        return (float(pair[0]), float(pair[1]))
    return None


def _paired_cell(c: Paired | None, what: str) -> str:
    """``+0.074 ▲ p 0.001`` (bold and coloured when significant) or ``–``."""
    if c is None:
        return "–"
    p = f'<span class="hint nowrap">{esc(_p_text(c.p_value_corrected))}</span>'
    if not c.significant:
        return f'{_signed(c.delta, 3)} <span class="ns" title="not significantly different from {esc(what)}">n.s.</span> {p}'
    tone = "up" if (c.delta or 0) > 0 else "down"
    return f'<span class="{tone} sig">{_signed(c.delta, 3)}</span> {p}'


def _isolation_cell(p: BenchPipeline) -> str:
    cls, text = ISOLATION[p.isolation_state]
    reason = (
        p.isolation.reason if p.isolation is not None else "the report records no tenant-isolation verdict"
    )
    count = f" ({p.leaks})" if p.isolation_state == "fail" and p.leaks else ""
    return f'<span class="badge small {cls}" title="{esc(reason)}">{text}{count}</span>'


def _build_cell(p: BenchPipeline) -> str:
    """Build seconds beside the embedding cache's state (``2.90`` / ``90 cached, 0 computed``)."""
    seconds = _num(p.build_seconds, 2)
    if p.embeddings is None:
        return seconds
    cached, computed = p.embeddings
    return f'{seconds}<br><span class="hint">embeddings: {cached} cached, {computed} computed</span>'


def _td(label: str, inner: str, cls: str = "num") -> str:
    """A cell labelled for the narrow-screen layout (rows become cards; each cell shows its label)."""
    return f'<td class="{cls}" data-label="{esc(label)}">{inner}</td>'


def ranking_table(report: BenchmarkReport) -> str:
    metrics = report.metric_names
    ranking = report.ranking
    primary = ranking.metric if ranking is not None else (metrics[0] if metrics else "")
    best = {
        m: max((v for p in report.pipelines if isinstance(v := p.metrics.get(m), (int, float))), default=None)
        for m in metrics
    }
    baseline, winner = report.baseline or "the baseline", ranking.winner if ranking else ""
    k = report.context_k if report.context_k is not None else "k"
    vs_base, vs_winner = f"Δ {primary} vs {baseline}", f"Δ {primary} vs winner"
    labels = [
        "#",
        "pipeline",
        *metrics,
        vs_base,
        *([vs_winner] if ranking is not None else []),
        "p50 ms",
        "p95 ms",
        "build s",
        f"tokens@{k}",
        "tenant isolation",
    ]
    head = "".join(
        f"<th{'' if label in ('pipeline', 'tenant isolation') else ' class=num'}>{esc(label)}</th>"
        for label in labels
    )
    rows = []
    for rank, p in enumerate(report.ranked(), start=1):
        latency = p.latency
        base_cell = (
            "baseline"
            if p.name == report.baseline
            else _paired_cell(report.against_baseline(p.name, primary), baseline)
        )
        cells = [
            f'<td class="num rank">{rank}</td>',
            f'<td class="name wide">{_name_cell(report, p)}</td>',
            *(_td(m, _metric_cell(report, p, m, best[m])) for m in metrics),
            _td(vs_base, base_cell),
        ]
        if ranking is not None:
            against = "winner" if p.name == winner else _paired_cell(ranking.against(p.name), winner)
            cells.append(_td(vs_winner, against))
        cells += [
            _td("p50 ms", ms_value(latency.p50 if latency else None)),
            _td("p95 ms", ms_value(latency.p95 if latency else None)),
            _td("build s", _build_cell(p), "num build wide"),
            _td(f"tokens@{k}", _num(p.context_tokens, 0)),
            _td("tenant isolation", _isolation_cell(p), ""),
        ]
        cls = ' class="win"' if p.name == winner else ""
        rows.append(f"<tr{cls}>{''.join(cells)}</tr>")
    return (
        f'<table class="ranking stack"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'
    )


def _legend(report: BenchmarkReport) -> str:
    ranking = report.ranking
    bases = "; ".join(report.latency_bases()) or "not recorded"
    parts = [
        f"Ranked by {esc(ranking.metric)}; ★ marks the winner and bold the best value of each metric."
        if ranking is not None
        else "",
        f"▲/▼: significantly different from {esc(report.baseline or 'the baseline')} on that metric; "
        "Δ columns: paired randomization test, Holm-corrected (vs the baseline across every pipeline and "
        "metric; vs the winner across the other pipelines), α = 0.05; n.s. = not significant.",
        f"Latency: {esc(bases)}. Build: seconds to build the indexes the pipeline uses (also when built "
        "earlier for another pipeline), with the embedding cache's state: a warm cache builds in a "
        "fraction of a cold one's time.",
    ]
    return f'<p class="hint">{" ".join(p for p in parts if p)}</p>'


def recommendation_section(report: BenchmarkReport) -> Section | None:
    advice = report.recommendation()
    if advice is None:
        return None
    invariants = (
        f"Every pipeline answered the same {esc(report.cases if report.cases is not None else '?')} cases "
        f"(tenants {esc(', '.join(report.tenants) or '?')}) at top_k {esc(report.top_k if report.top_k is not None else '?')}."
    )
    pages = report.pages or {}
    links = (
        '<p class="pages">Each pipeline\'s own page (every query, its chunks, latency): '
        + " · ".join(f'<a href="{esc(href)}">{esc(name)}</a>' for name, href in pages.items())
        + "</p>"
        if pages
        else ""
    )
    body = f'<p class="advice">{esc(advice)}</p><p class="hint">{invariants}</p>{links}'
    return "recommendation", "Recommendation", body


def ranking_section(report: BenchmarkReport) -> Section:
    metrics = report.metric_names
    ranked = report.ranked()
    series = [(p.name, [p.metrics.get(m) for m in metrics]) for p in ranked]
    winner = report.ranking.winner if report.ranking is not None else None
    intervals = {p.name: [mean_ci(p.data, m) for m in metrics] for p in ranked}
    chart = dot_plot(
        metrics,
        series,
        "every metric per pipeline with its 95% CI, axis scaled to the data",
        winner,
        intervals,
    )
    hint = (
        '<p class="hint">Each metric on its own axis, scaled to its values and their intervals (a break '
        "mark at the left: the axis does not start at 0); each dot carries its 95% bootstrap CI of the mean "
        "over the cases (whiskers), so a gap inside overlapping whiskers is not read as a wide one (the "
        "Significance section tests each paired difference); ringed: the winner.</p>"
    )
    body = _legend(report) + ranking_table(report) + hint + chart
    return "benchmark", "Pipelines ranked", body


def comparisons_section(report: BenchmarkReport) -> Section | None:
    if not report.comparisons:
        return None
    body = (
        f'<p class="hint">Each pipeline against <b>{esc(report.baseline or "")}</b>, paired per query; '
        "blue points are significant (the dashed line is no difference).</p>"
        + forest(report.comparisons, True)
        + comparison_table(report.comparisons, True)
    )
    ranking = report.ranking
    if ranking is not None and ranking.against_winner:
        body += (
            f"<h3>Against the winner, {esc(ranking.winner)}, on {esc(ranking.metric)}</h3>"
            + forest(ranking.against_winner, True)
            + comparison_table(ranking.against_winner, True)
        )
    return "comparisons", "Significance", body


def benchmark_sections(report: BenchmarkReport) -> list[Section]:
    made = [recommendation_section(report), ranking_section(report), comparisons_section(report)]
    return [s for s in made if s is not None]
