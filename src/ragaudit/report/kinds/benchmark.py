"""The ``benchmark`` report kind (ragaudit bench / demo): several pipelines side by side, ranked by the
first metric, with the winner, significance against the baseline and against the winner, cost
(per-query latency, build time with the embedding cache's state, context tokens), tenant isolation,
and a one-line recommendation in words (:meth:`BenchmarkReport.recommendation`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ragaudit.artifacts.tables import fmt_number, fmt_p, render_table
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.fields import Fields, Holes, Latency, Paired
from ragaudit.report.sections import build_text
from ragaudit.verdict import CheckVerdict

if TYPE_CHECKING:
    from ragaudit.report.html_parts import Section
    from ragaudit.report.view import ReportView


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
        close = 0
        for name in ranking.order[1:]:
            other, c = self.pipeline(name), ranking.against(name)
            if other is None or c is None or c.significant:
                continue
            close += 1
            parts.append(
                f"{name} is not significantly different from {winner.name}{_cost_words(other, winner)}"
            )
        runner_up = ranking.against(ranking.runner_up) if ranking.runner_up else None
        if runner_up is not None and runner_up.significant:
            lead = _signed(-runner_up.delta if runner_up.delta is not None else None)
            every = close == 0 and len(ranking.against_winner) == len(ranking.order) - 1
            parts.append(
                f"{winner.name} is significantly ahead of "
                + ("every other pipeline, " if every and len(ranking.order) > 2 else "")
                + f"the runner-up {ranking.runner_up} ({lead} {metric})"
            )
        state = winner.isolation_state
        if state == "fail":
            parts.append(f"but {winner.name} returned other tenants' chunks: do not ship it")
        elif state == "not_verified":
            parts.append(f"{winner.name}'s tenant isolation was not verified")
        return "; ".join(parts)


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
        leaks if isinstance(leaks, int) and not isinstance(leaks, bool) else None,
        CheckVerdict.from_json(p.opt("isolation")),
        p.data,
        basis if isinstance(basis, str) else None,
        _embeddings(p),
    )


class BenchmarkKind(ReportKind):
    name = "benchmark"
    required = ("pipelines[].name", "pipelines[].metrics", "comparisons")
    schema: ClassVar[Mapping[str, Any]] = {"$ref": "#/$defs/benchmark_report"}

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
        )

    def title(self, report: Mapping[str, Any]) -> str:
        return ", ".join(p.name for p in self.from_json(report).pipelines)

    def terminal(self, report: BenchmarkReport, limit: int = 10) -> list[str]:
        """The pipelines ranked (``*``: significantly different from the baseline; ``Δ winner``: the
        paired comparison with the winner), the invariants, how latency and build were measured, and
        the recommendation."""
        metrics, ranking = report.metric_names, report.ranking
        rows = []
        for rank, p in enumerate(report.ranked(), start=1):
            latency = p.latency or Latency(None, None, None, None)
            cells = [str(rank), p.name + (" (winner)" if ranking and p.name == ranking.winner else "")]
            cells += [
                fmt_number(p.metrics[m]) + ("*" if report.significant(p.name, m) else "") for m in metrics
            ]
            if ranking is not None:
                c = ranking.against(p.name)
                cells.append("-" if c is None else f"{_signed(c.delta)}{'*' if c.significant else ''}")
            cells += [
                fmt_number(latency.p50, 1),
                fmt_number(latency.p95, 1),
                fmt_number(p.build_seconds, 2),
                fmt_number(p.context_tokens, 0),
                _leak_cell(p),
            ]
            rows.append(cells)
        from ragaudit.report.holes_power import holes_terminal, power_terminal

        headers = ["#", "pipeline", *metrics]
        headers += [f"Δ winner {ranking.metric}"] if ranking is not None else []
        headers += ["p50 ms", "p95 ms", "build s", f"tokens@{report.context_k}", "leaks"]
        lines = [
            render_table(headers, rows, left=2),
            f"every pipeline: the same {report.cases} cases, tenants {', '.join(report.tenants)}, top_k "
            f"{report.top_k}; * = significantly different from {report.baseline} (Δ winner: from the "
            "winner) (paired randomization test, Holm-corrected, alpha 0.05)",
            *holes_terminal(report.holes),
            *power_terminal(report.comparisons),
        ]
        if report.latency_bases():
            lines.append(f"latency: {'; '.join(report.latency_bases())}")
        builds = [f"{p.name} {p.build_text()}" for p in report.pipelines if p.embeddings is not None]
        if builds:
            lines.append("build: " + "; ".join(builds))
        advice = report.recommendation()
        if advice:
            lines.append(f"recommendation: {advice}")
        return lines

    def markdown(self, view: ReportView) -> list[str]:
        from ragaudit.report.holes_power import holes_markdown, power_markdown
        from ragaudit.report.markdown import _benchmark

        report: BenchmarkReport = self.read(view)
        return [*_benchmark(report), *holes_markdown(report.holes), *power_markdown(report.comparisons)]

    def html(self, view: ReportView) -> list[Section]:
        from ragaudit.report.holes_power import holes_html, power_html
        from ragaudit.report.html_benchmark import benchmark_sections

        report: BenchmarkReport = self.read(view)
        extra = (holes_html(report.holes), power_html(report.comparisons))
        return [*benchmark_sections(report), *(s for s in extra if s is not None)]


def _leak_cell(p: BenchPipeline) -> str:
    """``0`` / ``3`` leaks when isolation was checked, ``not verified`` otherwise."""
    if p.isolation_state == "not_verified":
        return "not verified"
    return "-" if p.leaks is None else str(p.leaks)


KIND = BenchmarkKind()
