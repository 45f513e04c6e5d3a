"""The ``benchmark`` report kind (ragaudit bench / demo): several pipelines side by side, ranked by the
first metric, with the winner, significance against the baseline and against the winner, cost
(per-query latency, build time with the embedding cache's state, context tokens), tenant isolation,
and a one-line recommendation in words (:meth:`BenchmarkReport.recommendation`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from ragaudit.artifacts.tables import fmt_p
from ragaudit.report.document import (
    Badge,
    Block,
    Column,
    Document,
    DotPlot,
    Heading,
    Lead,
    Link,
    Links,
    Marked,
    Paragraph,
    Section,
    Table,
    Value,
)
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.comparison import comparison_table, forest
from ragaudit.report.kinds.fields import Fields, Holes, Latency, Paired, count
from ragaudit.report.kinds.judged_power import holes_section, power_section
from ragaudit.report.kinds.run_outcome import counted_verdict
from ragaudit.report.kinds.tenants import TenantComparisons, TenantSlices, tenants_section
from ragaudit.report.sections import build_text
from ragaudit.verdict import CheckVerdict, golden_question_isolation


@dataclass(frozen=True)
class BenchPipeline:
    """One pipeline of a benchmark: ``name`` and ``metrics`` are required."""

    name: str
    metrics: dict[str, Any]
    latency: Latency | None
    build_seconds: float | None
    context_tokens: int | float | None
    leaks: int | None
    isolation: CheckVerdict | None
    data: Mapping[str, Any]
    latency_basis: str | None = None
    """How ``latency`` was measured (``per query, one at a time``, or batched: a batch's time / its size)."""
    embeddings: tuple[int, int] | None = None
    """``(cached, computed)`` corpus embeddings while the pipeline was built (None: no dense part)."""

    @property
    def isolation_state(self) -> str:
        """``pass``, ``fail`` or ``not_verified`` (a report without a verdict: fail with leaks, else not verified)."""
        if self.isolation is not None:
            return self.isolation.state
        return "fail" if self.leaks else "not_verified"

    def build_text(self) -> str:
        """``2.90 s (embeddings: 90 cached, 0 computed)``: build time beside the embedding cache's state."""
        return build_text(self.data) or "-"


@dataclass(frozen=True)
class Ranking:
    """The pipelines ranked by ``metric``: the winner, the runner-up and each other pipeline against the winner."""

    metric: str
    order: list[str]
    winner: str
    runner_up: str | None
    against_winner: list[Paired]

    def against(self, system: str) -> Paired | None:
        return next((c for c in self.against_winner if c.system == system), None)


@dataclass(frozen=True)
class BenchmarkReport:
    """A benchmark report, typed: every pipeline's ``name`` and ``metrics``, and ``comparisons``, are required."""

    pipelines: list[BenchPipeline]
    comparisons: list[Paired]
    baseline: str | None
    context_k: int | None
    cases: int | None
    tenants: list[str]
    top_k: int | None
    holes: list[Holes]
    """Each pipeline's judged share of the top k (empty in a report written before it was measured)."""
    ranking: Ranking | None = None
    pages: Mapping[str, str] | None = None
    """``{pipeline: relative link}`` to each pipeline's own HTML page (``ragaudit demo`` writes them)."""
    timed: str | None = None
    """How the pipelines' timed runs were ordered (``pipelines taking turns query by query``)."""
    notes: tuple[str, ...] = ()
    """The judged-share warnings (shown in the page's notes)."""
    slices: tuple[TenantSlices, ...] = ()
    """Each pipeline's metrics per tenant (none with one tenant)."""
    tenant_tests: TenantComparisons | None = None
    """The paired test per tenant against the baseline (None with one tenant)."""
    in_sample: tuple[str, ...] = ()
    """The pipelines scored on cases their fitted stage was fitted on (:func:`_in_sample_pipelines`)."""

    @property
    def metric_names(self) -> list[str]:
        """The metrics of the table: those of the first pipeline."""
        return list(self.pipelines[0].metrics) if self.pipelines else []

    def significant(self, system: str, metric: str) -> bool:
        return any(c.system == system and c.metric == metric and c.significant for c in self.comparisons)

    def against_baseline(self, system: str, metric: str) -> Paired | None:
        return next((c for c in self.comparisons if c.system == system and c.metric == metric), None)

    def ranked(self) -> list[BenchPipeline]:
        """The pipelines in rank order (the ranking's, else as listed)."""
        if self.ranking is None:
            return list(self.pipelines)
        by_name = {p.name: p for p in self.pipelines}
        ordered = [by_name[n] for n in self.ranking.order if n in by_name]
        return ordered + [p for p in self.pipelines if p.name not in self.ranking.order]

    def pipeline(self, name: str) -> BenchPipeline | None:
        return next((p for p in self.pipelines if p.name == name), None)

    def latency_bases(self) -> list[str]:
        """The distinct ways the pipelines' latency was measured (one, normally), and how the timed runs
        were ordered."""
        bases = list(dict.fromkeys(p.latency_basis for p in self.pipelines if p.latency_basis))
        return bases + ([self.timed] if bases and self.timed else [])

    def recommendation(self) -> str | None:
        """One line in words: the winner and its gain over the baseline (significant or not), each
        pipeline not significantly different from the winner with its latency relative to the
        winner's (median per query), the winner's significant lead over the runner-up, and a winner
        that leaks or was not checked for leaks."""
        ranking = self.ranking
        winner = self.pipeline(ranking.winner) if ranking is not None else None
        if ranking is None or winner is None:
            return None
        metric, parts = ranking.metric, []
        gain = self.against_baseline(winner.name, metric)
        if len(ranking.order) == 1:
            parts.append(f"{winner.name}: the only pipeline benchmarked, nothing to compare it with")
        elif winner.name == self.baseline or gain is None:
            parts.append(
                f"{winner.name}: the highest {metric}"
                + (" (it is the baseline)" if self.baseline == winner.name else "")
            )
        else:
            verdict = (
                "significant" if gain.significant else f"not significant ({fmt_p(gain.p_value_corrected)})"
            )
            parts.append(f"{winner.name}: {_signed(gain.delta)} {metric} over {gain_base(self)}, {verdict}")
        close, mentioned = 0, []
        for name in ranking.order[1:]:
            other, c = self.pipeline(name), ranking.against(name)
            if other is None or c is None or c.significant:
                continue
            close += 1
            mentioned.append(name)
            parts.append(
                f"{name} is not significantly different from {winner.name}{_cost_words(other, winner)}"
            )
        runner_up = ranking.against(ranking.runner_up) if ranking.runner_up else None
        if runner_up is not None and runner_up.significant:
            lead = _signed(-runner_up.delta if runner_up.delta is not None else None)
            every = close == 0 and len(ranking.against_winner) == len(ranking.order) - 1
            mentioned.append(str(ranking.runner_up))
            parts.append(
                f"{winner.name} is significantly ahead of "
                + ("every other pipeline, " if every and len(ranking.order) > 2 else "")
                + f"the runner-up {ranking.runner_up} ({lead} {metric})"
            )
        if winner.name in self.in_sample:
            parts.append(
                f"but {winner.name}'s figures are IN-SAMPLE (its fitted stage was fitted on these cases): they "
                "flatter it and are no evidence for new queries; score it on held-out cases before choosing it"
            )
        named = [n for n in mentioned if n in self.in_sample]
        if named:  # a pipeline named above beside the winner, itself scored on its fitted cases
            parts.append(
                f"{' and '.join(named)}: IN-SAMPLE figures (scored on the cases a fitted stage was fitted on)"
            )
        if failed := failed_runs(self.pipelines):  # a failed case scores 0: the ranking is not the runs'
            parts.append(failed)
        state = winner.isolation_state
        if state == "fail":
            parts.append(f"but {winner.name} returned other tenants' chunks: do not ship it")
        elif state == "not_verified":
            parts.append(f"{winner.name}'s tenant isolation was not verified")
        return "; ".join(parts)


def failed_runs(pipelines: Sequence[BenchPipeline]) -> str | None:
    """The words for the pipelines whose run failed on some cases (errors and missing cases, as
    ``ragaudit eval`` counts them; ``None``: none did): each failed case scores 0, so the ranking and
    every comparison involving them are not their systems' figures."""
    failed = []
    for pipeline in pipelines:
        counts = pipeline.data.get("counts")
        counts = counts if isinstance(counts, Mapping) else {}
        n = sum(v for k in ("errors", "missing") if isinstance(v := counts.get(k), int) and v > 0)
        if n:
            failed.append(f"{pipeline.name} ({n:,} of {counts.get('cases', '?')} cases)")
    if not failed:
        return None
    return (
        f"but the runs of {', '.join(failed)} failed on some cases, each scored 0: the ranking and the "
        "comparisons with them are not their systems' figures; re-run them before choosing"
    )


def _in_sample_pipelines(report: Fields) -> tuple[str, ...]:
    """The pipelines whose own ``in_sample`` section says ``in_sample``; a report written before each
    pipeline carried its own: those the report-level section names (``systems``, else ``system``:
    ``"pipeline NAME"``)."""
    own = [
        str(p.need("name"))
        for p in report.each("pipelines")
        if p.obj("in_sample", required=False).opt("state") == "in_sample"
    ]
    section = report.obj("in_sample", required=False)
    listed = section.opt("systems")
    systems = listed if isinstance(listed, list) else [section.opt("system")]
    named = [s.removeprefix("pipeline ") for s in systems if isinstance(s, str)]
    return tuple(dict.fromkeys([*own, *named]))


def gain_base(report: BenchmarkReport) -> str:
    return report.baseline if report.baseline is not None else "the baseline"


def _signed(value: float | None) -> str:
    return "–" if value is None else f"{value:+.3f}"


def _cost_words(other: BenchPipeline, winner: BenchPipeline) -> str:
    """`` at 2.1x the latency`` of ``other`` against ``winner`` (median per query): ``about the same``
    within 0.8-1.25x (timings on a shared machine move that much), ``the cheaper choice`` below 0.67x;
    nothing when unknown."""
    mine = other.latency.p50 if other.latency is not None else None
    theirs = winner.latency.p50 if winner.latency is not None else None
    if mine is None or theirs is None or theirs <= 0:
        return ""
    ratio = mine / theirs
    if 0.8 <= ratio <= 1.25:
        return " at about the same latency"
    shown = f"{ratio:.0f}" if ratio >= 10 else f"{ratio:.1f}"
    return f" at {shown}x the latency" + (": the cheaper choice" if ratio < 0.67 else "")


def _embeddings(p: Fields) -> tuple[int, int] | None:
    counts = p.opt("embeddings")
    if not isinstance(counts, Mapping):
        return None
    cached, computed = counts.get("cached"), counts.get("computed")
    return (cached, computed) if isinstance(cached, int) and isinstance(computed, int) else None


def _ranking(report: Fields) -> Ranking | None:
    if not isinstance(report.opt("ranking"), Mapping):
        return None
    r = report.obj("ranking")
    runner_up = r.opt("runner_up")
    return Ranking(
        str(r.need("metric")),
        r.texts("order"),
        str(r.need("winner")),
        None if runner_up is None else str(runner_up),
        [Paired.read(c) for c in r.each("against_winner", required=False)],
    )


def _pipeline(p: Fields) -> BenchPipeline:
    build, tokens, leaks = p.opt("index_build_seconds"), p.opt("context_tokens"), p.opt("leaks")
    basis = p.opt("latency_basis")
    return BenchPipeline(
        str(p.need("name")),
        dict(p.obj("metrics").data),
        Latency.read(p.opt("latency_ms")),
        float(build) if isinstance(build, (int, float)) else None,
        tokens if isinstance(tokens, (int, float)) and not isinstance(tokens, bool) else None,
        count(leaks),
        golden_question_isolation(p.opt("isolation")),
        p.data,
        basis if isinstance(basis, str) else None,
        _embeddings(p),
    )


class BenchmarkKind(ReportKind):
    name = "benchmark"
    required = ("pipelines[].name", "pipelines[].metrics", "comparisons")
    schema: ClassVar[Mapping[str, Any]] = {"$ref": "#/$defs/benchmark_report"}
    shows_notes = True

    def typed(self, report: Fields) -> BenchmarkReport:
        invariants = report.obj("invariants", required=False)
        context_k, cases, top_k = report.opt("context_k"), invariants.opt("cases"), invariants.opt("top_k")
        pages = report.opt("pages")
        return BenchmarkReport(
            [_pipeline(p) for p in report.each("pipelines")],
            [Paired.read(c) for c in report.each("comparisons")],
            None if report.opt("baseline") is None else str(report.opt("baseline")),
            context_k if isinstance(context_k, int) else None,
            cases if isinstance(cases, int) else None,
            invariants.texts("tenants"),
            top_k if isinstance(top_k, int) else None,
            Holes.all_in(report),
            _ranking(report),
            {str(k): str(v) for k, v in pages.items()} if isinstance(pages, Mapping) else None,
            timed if isinstance(timed := invariants.opt("latency_timed"), str) else None,
            tuple(report.texts("notes")),
            tuple(
                s
                for p in report.each("pipelines")
                if (s := TenantSlices.read(p.opt("tenant_slices"), str(p.need("name")))) is not None
            ),
            TenantComparisons.read(report),
            _in_sample_pipelines(report),
        )

    def title(self, report: Mapping[str, Any]) -> str:
        return ", ".join(p.name for p in self.from_json(report).pipelines)

    def document(self, report: BenchmarkReport) -> Document:
        """The recommendation, the pipelines ranked (winner, significance against the baseline and the
        winner, cost, tenant isolation; a dot plot of every metric with its 95% CI on the page), the
        paired comparisons against the baseline and against the winner, each metric and paired test per tenant, Judged@k with its warnings, power."""
        sections = [
            _recommendation(report),
            _ranked(report),
            _significance(report),
            tenants_section(report.slices, report.tenant_tests, report.comparisons, report.baseline),
            holes_section(report.holes, report.notes),
            power_section(report.comparisons),
        ]
        return Document(tuple(s for s in sections if s is not None))


def _recommendation(report: BenchmarkReport) -> Section | None:
    advice = report.recommendation()
    if advice is None:
        return None
    ranking = report.ranking
    star = f"; ★ = the winner (highest {ranking.metric})" if ranking is not None else ""
    invariants = Paragraph(
        f"every pipeline: the same {_known(report.cases)} cases, tenants {', '.join(report.tenants) or '?'}, "
        f"top_k {_known(report.top_k)}{star}; ▲/▼ = significantly higher/lower than {gain_base(report)} "
        "(paired randomization test; p Holm-corrected within each Δ column, so one pair can read two p-values; alpha 0.05)"
    )
    pages = report.pages or {}
    links = (
        (Links("Each pipeline's own page (every query, its chunks, latency):", tuple(pages.items())),)
        if pages
        else ()
    )
    failed = tuple(
        v for p in report.pipelines if (v := counted_verdict(f"pipeline {p.name}", p.data.get("counts")))
    )  # a pipeline whose cases failed is said beside the advice: its figures score them 0
    return Section(
        "recommendation", "Recommendation", (Lead("Recommendation", advice), *failed, invariants, *links)
    )


def _known(value: object) -> str:
    return "?" if value is None else str(value)


def _paired_text(c: Paired | None) -> Value:
    """``+0.077* p < 0.001`` (bold, coloured: significant), ``-0.012 n.s. p = 0.410``, or missing."""
    if c is None:
        return None
    p = fmt_p(c.p_value_corrected)
    if not c.significant:
        return f"{_signed(c.delta)} n.s. {p}"
    tone = "up" if (c.delta or 0) > 0 else "down"
    return Marked(f"{_signed(c.delta)}* {p}", strong=True, tone=tone)


def _metric_value(report: BenchmarkReport, p: BenchPipeline, metric: str, best: float | None) -> Value:
    """The mean, ▲/▼ when significantly different from the baseline, bold when the best."""
    value = p.metrics.get(metric)
    c = report.against_baseline(p.name, metric)
    mark = ("▲" if (c.delta or 0) > 0 else "▼") if c is not None and c.significant else ""
    top = best is not None and isinstance(value, (int, float)) and value >= best - 1e-12
    if not mark and not top:
        return value if isinstance(value, (int, float)) else None
    tone = ("up" if mark == "▲" else "down") if mark else ""
    return Marked(value if isinstance(value, (int, float)) else None, mark, strong=top, tone=tone)


ISOLATION = {"pass": "✓ verified", "fail": "✗ leaks", "not_verified": "? not verified"}
"""How each tenant-isolation state reads in a cell (only a pass gets a check mark)."""


def _isolation(p: BenchPipeline) -> Badge:
    state = p.isolation_state
    reason = (
        p.isolation.reason if p.isolation is not None else "the report records no tenant-isolation verdict"
    )
    leaks = f" ({p.leaks})" if state == "fail" and p.leaks else ""
    return Badge(state, ISOLATION[state] + leaks, reason)  # type: ignore[arg-type]


def _ranked(report: BenchmarkReport) -> Section:
    metrics, ranking = report.metric_names, report.ranking
    primary = ranking.metric if ranking is not None else (metrics[0] if metrics else "")
    best = {
        m: max((v for p in report.pipelines if isinstance(v := p.metrics.get(m), (int, float))), default=None)
        for m in metrics
    }
    baseline, winner = gain_base(report), ranking.winner if ranking is not None else None
    columns = [Column("#", "id"), Column("pipeline"), *(Column(m, "number") for m in metrics)]
    columns.append(Column(f"Δ {primary} vs {baseline}"))
    columns += [Column(f"Δ {primary} vs winner")] if ranking is not None else []
    columns += [Column("p50 ms", "number", 1), Column("p95 ms", "number", 1), Column("build s", "number", 2),
                Column(f"tokens@{_known(report.context_k) if report.context_k is not None else 'k'}", "number", 0),
                Column("tenant isolation")]  # fmt: skip
    rows: list[tuple[Value, ...]] = []
    pages = report.pages or {}
    for rank, p in enumerate(report.ranked(), start=1):
        label = (
            ("★ " if p.name == winner else "")
            + p.name
            + (" (baseline)" if p.name == report.baseline else "")
            + (" (IN-SAMPLE)" if p.name in report.in_sample else "")
        )
        name: Value = Link(label, pages[p.name]) if p.name in pages else label
        row: list[Value] = [rank, name, *(_metric_value(report, p, m, best[m]) for m in metrics)]
        row.append(
            "baseline"
            if p.name == report.baseline
            else _paired_text(report.against_baseline(p.name, primary))
        )
        if ranking is not None:
            row.append("winner" if p.name == winner else _paired_text(ranking.against(p.name)))
        latency = p.latency
        row += [latency.p50 if latency else None, latency.p95 if latency else None, p.build_seconds,
                p.context_tokens, _isolation(p)]  # fmt: skip
        rows.append(tuple(row))
    order = [p.name for p in report.ranked()]
    table = Table(
        tuple(columns),
        tuple(rows),
        cut=False,
        name="ranking",
        highlight=order.index(winner) if winner in order else None,
    )
    notes: list[Block] = []
    if report.latency_bases():
        notes.append(Paragraph(f"latency: {'; '.join(report.latency_bases())}"))
    builds = [f"{p.name} {p.build_text()}" for p in report.pipelines if p.embeddings is not None]
    if builds:
        notes.append(Paragraph("build: " + "; ".join(builds)))
    legend = Paragraph(
        (
            f"Ranked by {primary}; ★ marks the winner and bold the best value of each metric. "
            if ranking
            else ""
        )
        + (
            "(IN-SAMPLE): scored on the cases its fitted stage was fitted on, figures that flatter it. "
            if report.in_sample
            else ""
        )
        + f"▲/▼: significantly different from {baseline} on that metric; Δ columns: paired randomization "
        "test, Holm-corrected (vs the baseline across every pipeline and metric; vs the winner across the "
        "other pipelines), α = 0.05; n.s. = not significant. Build: seconds to build the indexes the "
        "pipeline uses (also when built earlier for another pipeline), with the embedding cache's state: a "
        "warm cache builds in a fraction of a cold one's time.",
        hint=True,
    )
    ranked = report.ranked()
    chart = DotPlot(
        "every metric per pipeline with its 95% CI, axis scaled to the data",
        tuple(metrics),
        tuple((p.name, tuple(_number(p.metrics.get(m)) for m in metrics)) for p in ranked),
        winner,
        tuple((p.name, tuple(mean_ci(p.data, m) for m in metrics)) for p in ranked),
        caption="Each metric on its own axis, scaled to its values and their intervals (a break mark at the "
        "left: the axis does not start at 0); each dot carries its 95% bootstrap CI of the mean over the "
        "cases (whiskers), so a gap inside overlapping whiskers is not read as a wide one (the Significance "
        "section tests each paired difference); ringed: the winner.",
    )
    return Section("benchmark", "Pipelines ranked", (legend, table, *notes, chart))


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def mean_ci(pipeline: Mapping[str, Any], metric: str) -> tuple[float, float] | None:
    """A pipeline's 95% CI of ``metric``'s mean as the benchmark report records it (``metrics_ci``)."""
    cis = pipeline.get("metrics_ci")
    pair = cis.get(metric) if isinstance(cis, Mapping) else None
    if isinstance(pair, (list, tuple)) and len(pair) == 2 and all(_number(v) is not None for v in pair):
        return (float(pair[0]), float(pair[1]))
    return None


def _significance(report: BenchmarkReport) -> Section | None:
    if not report.comparisons:
        return None
    blocks: list[Block] = [
        Paragraph(f"Each pipeline against {gain_base(report)}, paired per query.", hint=True),
        forest(
            "paired deltas against the baseline with confidence intervals",
            [(f"{c.system} · {c.metric}", c) for c in report.comparisons],
        ),
        comparison_table(report.comparisons),
    ]
    ranking = report.ranking
    if ranking is not None and ranking.against_winner:
        blocks += [
            Heading(f"Against the winner, {ranking.winner}, on {ranking.metric}"),
            forest(
                "paired deltas against the winner with confidence intervals",
                [(f"{c.system} · {c.metric}", c) for c in ranking.against_winner],
            ),
            comparison_table(ranking.against_winner),
        ]
    return Section("comparisons", "Significance", tuple(blocks))


KIND = BenchmarkKind()
