"""The ``reranker-eval`` report kind (ragaudit eval-reranker): before / after / oracle per metric."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragaudit.artifacts.tables import delta_cells, delta_ci_label, fmt_number, render_table
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.fields import Fields
from ragaudit.report.sections import part

if TYPE_CHECKING:
    from ragaudit.report.html_parts import Section
    from ragaudit.report.view import ReportView


@dataclass(frozen=True)
class RerankerEvalReport:
    """A reranker-eval report, typed: ``reranker`` and every summary row's ``metric`` are required."""

    reranker: str
    top_n: Any
    recall_metric: Any
    first_stage_recall: Any
    summary: list[Mapping[str, Any]]
    """Per metric: ``before``, ``after``, the paired comparison, ``ceiling`` and ``headroom_captured``."""
    comparisons: list[Mapping[str, Any]]
    alpha: Any
    latency: Mapping[str, Any]
    notes: list[str]


class RerankerEvalKind(ReportKind):
    name = "reranker-eval"
    required = ("reranker", "summary[].metric")

    def typed(self, report: Fields) -> RerankerEvalReport:
        recall, latency = (
            report.obj("first_stage_recall", required=False),
            report.obj("latency_ms", required=False),
        )
        return RerankerEvalReport(
            str(report.need("reranker")),
            report.opt("top_n"),
            recall.opt("metric"),
            recall.opt("value"),
            [r.data for r in report.each("summary")],
            [c.data for c in report.each("comparisons", required=False)],
            report.opt("alpha"),
            latency.data,
            report.texts("notes"),
        )

    def terminal(self, report: RerankerEvalReport, limit: int = 10) -> list[str]:
        """Before / after / oracle per metric, the first stage's recall, the reranker's added latency, notes."""
        rows = [
            [
                str(r["metric"]),
                fmt_number(r["before"]),
                fmt_number(r["after"]),
                *delta_cells(r),
                fmt_number(r["ceiling"]),
                "-" if r["headroom_captured"] is None else f"{100 * r['headroom_captured']:.0f}%",
            ]
            for r in report.summary
        ]
        ci = delta_ci_label(report.comparisons, short=True)
        headers = ["metric", "before", "after", "delta", ci, "p (Holm)", "W/T/L", "oracle", "captured"]
        lines = [
            render_table(headers, rows),
            f"reranker {report.reranker} over the first stage's top {report.top_n}: first-stage "
            f"{report.recall_metric} = {fmt_number(report.first_stage_recall)} (the share of relevant items "
            "it can reorder at all); oracle = the candidates in ideal order by grade; captured = "
            "(after - before) / (oracle - before)",
            f"* = significant at alpha {report.alpha} (paired randomization test, Holm-corrected)",
        ]
        first, added = report.latency.get("first_stage"), report.latency.get("rerank_added")
        if first and added:
            lines.append(
                f"latency ms: first stage p50 {first['p50']:.1f} p95 {first['p95']:.1f}; the reranker adds "
                f"p50 {added['p50']:.1f} p95 {added['p95']:.1f} ({report.latency['cases']} cases)"
            )
        return lines + [f"note: {note}" for note in report.notes]

    def title(self, report: Mapping[str, Any]) -> str:
        return f"{report['reranker']} in {part(report, 'pipeline').get('name', 'the pipeline')}"

    def markdown(self, view: ReportView) -> list[str]:
        from ragaudit.report.markdown import _reranker

        return _reranker(view.report)

    def html(self, view: ReportView) -> list[Section]:
        from ragaudit.report.html_experiments import reranker_section

        return [reranker_section(view)]


KIND = RerankerEvalKind()
