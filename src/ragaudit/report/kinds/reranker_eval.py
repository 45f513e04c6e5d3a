"""The ``reranker-eval`` report kind (ragaudit eval-reranker): before / after / oracle per metric."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragaudit.artifacts.tables import delta_cells, delta_ci_label, fmt_number, render_table
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.fields import Fields, Latency, Paired, number, significance_of
from ragaudit.report.sections import part

if TYPE_CHECKING:
    from ragaudit.report.html_parts import Section
    from ragaudit.report.view import ReportView


@dataclass(frozen=True)
class RerankerRow:
    """One metric: before and after the reranker (the paired comparison), the oracle and the share of
    the headroom the reranker captured."""

    comparison: Paired
    before: float | None
    after: float | None
    ceiling: float | None
    captured: float | None


@dataclass(frozen=True)
class RerankLatency:
    """The latency part: cases, the first stage's and the reranker's added latency, the reranker cache."""

    cases: Any
    first_stage: Latency | None
    rerank_added: Latency | None
    cache: Mapping[str, Any]


@dataclass(frozen=True)
class RerankerEvalReport:
    """A reranker-eval report, typed: ``reranker`` and every summary row's ``metric`` are required."""

    reranker: str
    top_n: Any
    recall_metric: Any
    first_stage_recall: Any
    rows: list[RerankerRow]
    alpha: Any
    """As the command was given it (the terminal line)."""
    significance: tuple[Any, str]
    latency: RerankLatency | None
    notes: list[str]


def _row(r: Fields) -> RerankerRow:
    return RerankerRow(
        Paired.read(r, system=""),
        number(r.opt("before")),
        number(r.opt("after")),
        number(r.opt("ceiling")),
        number(r.opt("headroom_captured")),
    )


def _latency(latency: Fields) -> RerankLatency | None:
    if not latency.data:
        return None
    return RerankLatency(
        latency.opt("cases"),
        Latency.read(latency.opt("first_stage")),
        Latency.read(latency.opt("rerank_added")),
        latency.obj("reranker_cache", required=False).data,
    )


class RerankerEvalKind(ReportKind):
    name = "reranker-eval"
    required = ("reranker", "summary[].metric")

    def typed(self, report: Fields) -> RerankerEvalReport:
        recall = report.obj("first_stage_recall", required=False)
        return RerankerEvalReport(
            str(report.need("reranker")),
            report.opt("top_n"),
            recall.opt("metric"),
            recall.opt("value"),
            [_row(r) for r in report.each("summary")],
            report.opt("alpha"),
            significance_of(report),
            _latency(report.obj("latency_ms", required=False)),
            report.texts("notes"),
        )

    def terminal(self, report: RerankerEvalReport, limit: int = 10) -> list[str]:
        """Before / after / oracle per metric, the first stage's recall, the reranker's added latency, notes."""
        rows = [
            [
                r.comparison.metric,
                fmt_number(r.before),
                fmt_number(r.after),
                *delta_cells(r.comparison.data),
                fmt_number(r.ceiling),
                "-" if r.captured is None else f"{100 * r.captured:.0f}%",
            ]
            for r in report.rows
        ]
        ci = delta_ci_label([r.comparison.data for r in report.rows], short=True)
        headers = ["metric", "before", "after", "delta", ci, "p (Holm)", "W/T/L", "oracle", "captured"]
        lines = [
            render_table(headers, rows),
            f"reranker {report.reranker} over the first stage's top {report.top_n}: first-stage "
            f"{report.recall_metric} = {fmt_number(report.first_stage_recall)} (the share of relevant items "
            "it can reorder at all); oracle = the candidates in ideal order by grade; captured = "
            "(after - before) / (oracle - before)",
            f"* = significant at alpha {report.alpha} (paired randomization test, Holm-corrected)",
        ]
        lat = report.latency
        first, added = (lat.first_stage, lat.rerank_added) if lat is not None else (None, None)
        if lat is not None and first is not None and added is not None:
            lines.append(
                f"latency ms: first stage p50 {first.p50 or 0:.1f} p95 {first.p95 or 0:.1f}; the reranker adds "
                f"p50 {added.p50 or 0:.1f} p95 {added.p95 or 0:.1f} ({lat.cases} cases)"
            )
        return lines + [f"note: {note}" for note in report.notes]

    def title(self, report: Mapping[str, Any]) -> str:
        return f"{report['reranker']} in {part(report, 'pipeline').get('name', 'the pipeline')}"

    def markdown(self, view: ReportView) -> list[str]:
        from ragaudit.report.markdown import _reranker

        return _reranker(self.read(view))

    def html(self, view: ReportView) -> list[Section]:
        from ragaudit.report.html_experiments import reranker_section

        return [reranker_section(self.read(view))]


KIND = RerankerEvalKind()
