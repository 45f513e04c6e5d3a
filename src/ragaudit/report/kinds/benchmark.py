"""The ``benchmark`` report kind (ragaudit bench / demo): several pipelines side by side."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ragaudit.artifacts.tables import fmt_number, render_table
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.fields import Fields, Holes, Latency, Paired
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

    @property
    def metric_names(self) -> list[str]:
        """The metrics of the table: those of the first pipeline."""
        return list(self.pipelines[0].metrics) if self.pipelines else []

    def significant(self, system: str, metric: str) -> bool:
        return any(c.system == system and c.metric == metric and c.significant for c in self.comparisons)


def _pipeline(p: Fields) -> BenchPipeline:
    build, tokens, leaks = p.opt("index_build_seconds"), p.opt("context_tokens"), p.opt("leaks")
    return BenchPipeline(
        str(p.need("name")),
        dict(p.obj("metrics").data),
        Latency.read(p.opt("latency_ms")),
        float(build) if isinstance(build, (int, float)) else None,
        tokens if isinstance(tokens, (int, float)) and not isinstance(tokens, bool) else None,
        leaks if isinstance(leaks, int) and not isinstance(leaks, bool) else None,
        CheckVerdict.from_json(p.opt("isolation")),
        p.data,
    )


class BenchmarkKind(ReportKind):
    name = "benchmark"
    required = ("pipelines[].name", "pipelines[].metrics", "comparisons")
    schema: ClassVar[Mapping[str, Any]] = {"$ref": "#/$defs/benchmark_report"}

    def typed(self, report: Fields) -> BenchmarkReport:
        invariants = report.obj("invariants", required=False)
        context_k, cases, top_k = report.opt("context_k"), invariants.opt("cases"), invariants.opt("top_k")
        return BenchmarkReport(
            [_pipeline(p) for p in report.each("pipelines")],
            [Paired.read(c) for c in report.each("comparisons")],
            None if report.opt("baseline") is None else str(report.opt("baseline")),
            context_k if isinstance(context_k, int) else None,
            cases if isinstance(cases, int) else None,
            invariants.texts("tenants"),
            top_k if isinstance(top_k, int) else None,
            Holes.all_in(report),
        )

    def title(self, report: Mapping[str, Any]) -> str:
        return ", ".join(p.name for p in self.from_json(report).pipelines)

    def terminal(self, report: BenchmarkReport, limit: int = 10) -> list[str]:
        """The pipelines table (``*``: significantly different from the baseline) and the invariants."""
        metrics = report.metric_names
        rows = []
        for p in report.pipelines:
            latency = p.latency or Latency(None, None, None, None)
            cells = [p.name]
            cells += [
                fmt_number(p.metrics[m]) + ("*" if report.significant(p.name, m) else "") for m in metrics
            ]
            cells += [
                fmt_number(latency.p50, 1),
                fmt_number(latency.p95, 1),
                fmt_number(p.build_seconds, 2),
                fmt_number(p.context_tokens, 0),
            ]
            rows.append(cells)
        headers = ["pipeline", *metrics, "p50 ms", "p95 ms", "build s", f"tokens@{report.context_k}"]
        from ragaudit.report.holes_power import holes_terminal, power_terminal

        return [
            render_table(headers, rows),
            f"every pipeline: the same {report.cases} cases, tenants {', '.join(report.tenants)}, top_k "
            f"{report.top_k}; * = significantly different from {report.baseline} (paired randomization test, "
            "Holm-corrected, alpha 0.05)",
            *holes_terminal(report.holes),
            *power_terminal(report.comparisons),
        ]

    def markdown(self, view: ReportView) -> list[str]:
        from ragaudit.report.holes_power import holes_markdown, power_markdown
        from ragaudit.report.markdown import _benchmark

        report: BenchmarkReport = self.read(view)
        return [*_benchmark(report), *holes_markdown(report.holes), *power_markdown(report.comparisons)]

    def html(self, view: ReportView) -> list[Section]:
        from ragaudit.report.holes_power import holes_html, power_html
        from ragaudit.report.html_experiments import benchmark_section

        report: BenchmarkReport = self.read(view)
        extra = (holes_html(report.holes), power_html(report.comparisons))
        return [benchmark_section(report), *(s for s in extra if s is not None)]


KIND = BenchmarkKind()
