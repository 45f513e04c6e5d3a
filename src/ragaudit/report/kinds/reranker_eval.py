"""The ``reranker-eval`` report kind (ragaudit eval-reranker): before / after / oracle per metric."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragaudit.artifacts.tables import fmt_number
from ragaudit.report.document import Block, Column, Document, DotPlot, Paragraph, Section, Table
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.comparison import delta_columns, delta_values, forest
from ragaudit.report.kinds.fields import Fields, Latency, Paired, number, significance_of
from ragaudit.report.sections import part


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
    shows_notes = True

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

    def document(self, report: RerankerEvalReport) -> Document:
        """Before / after / oracle per metric (a dot each on the metric's axis, the table, the gains
        around zero), the first stage's recall, the reranker's added latency, notes."""
        rows = [r.comparison for r in report.rows]
        table = Table(
            (Column("metric"), Column("before", "number"), Column("after", "number"), *delta_columns(rows),
             Column("oracle", "number"), Column("captured", "percent")),
            tuple((r.comparison.metric, r.before, r.after, *delta_values(r.comparison), r.ceiling, r.captured)
                  for r in report.rows),
            cut=False,
        )  # fmt: skip
        plot = DotPlot(
            "before, after and oracle per metric, axes scaled to the data",
            tuple(r.comparison.metric for r in report.rows),
            (
                ("before", tuple(r.before for r in report.rows)),
                ("after", tuple(r.after for r in report.rows)),
                ("oracle", tuple(r.ceiling for r in report.rows)),
            ),
            "after",
        )
        blocks: list[Block] = [
            plot,
            table,
            forest("reranker gain per metric", [(c.metric, c) for c in rows]),
            Paragraph(
                f"reranker {report.reranker} over the first stage's top {report.top_n}: first-stage "
                f"{report.recall_metric} = {fmt_number(report.first_stage_recall)} (the share of relevant "
                "items it can reorder at all); oracle = the candidates in ideal order by grade; captured = "
                "(after - before) / (oracle - before)"
            ),
            Paragraph(f"* = significant at alpha {report.alpha} (paired randomization test, Holm-corrected)"),
        ]
        lat = report.latency
        first, added = (lat.first_stage, lat.rerank_added) if lat is not None else (None, None)
        if lat is not None and first is not None and added is not None:
            cache = lat.cache
            hits = (
                f"; reranker cache {cache.get('hits', 0)} hits, {cache.get('misses', 0)} misses"
                if cache
                else ""
            )
            blocks.append(
                Paragraph(
                    f"latency ms: first stage p50 {first.p50 or 0:.1f} p95 {first.p95 or 0:.1f}; the reranker adds "
                    f"p50 {added.p50 or 0:.1f} p95 {added.p95 or 0:.1f} ({lat.cases} cases){hits}"
                )
            )
        blocks += [Paragraph(f"note: {note}") for note in report.notes]
        return Document((Section("reranker", "Reranker", tuple(blocks)),))

    def title(self, report: Mapping[str, Any]) -> str:
        return f"{report['reranker']} in {part(report, 'pipeline').get('name', 'the pipeline')}"


KIND = RerankerEvalKind()
