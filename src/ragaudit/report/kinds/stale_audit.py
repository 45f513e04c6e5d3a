"""The ``stale-audit`` (ragaudit audit-stale) report kind: superseded document versions in the top k."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragaudit.report.document import Block, Column, Document, Items, Paragraph, Section, Table, Verdict
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.fields import Fields

FIGURES = ("stale_share", "stale_rate", "stale_above_active")
"""The audit's figures (``<figure>@k``), in this order first; a report may carry others (drawn after)."""
MEANING = (
    "stale_share@k: mean share of the top k that are superseded versions; stale_rate@k: share of cases "
    "with at least one; stale_above_active@k: share of cases where a superseded version ranks above its "
    "active version (or that version is not in the top k)."
)


@dataclass(frozen=True)
class StaleSource:
    """One audited source: its stale figures, the offending cases and how many requests failed."""

    name: str
    metrics: dict[str, Any]
    offending: list[tuple[str, list[Mapping[str, Any]]]]
    """``(case id, stale items)``; an item has ``rank``, ``doc_id``, ``active_doc_id`` and ``active_rank``."""
    failed: int
    not_verified: str | None = None
    """Why the figures check nothing (no superseded version in the corpus), else ``None``."""


@dataclass(frozen=True)
class StaleAuditReport:
    """A stale-audit report, typed: ``k`` and every source's ``name``, ``metrics`` and ``offending_cases``."""

    k: int
    sources: list[StaleSource]

    def figures(self) -> list[str]:
        """Every figure name the sources carry: the audit's own first, then any other in report order."""
        names = dict.fromkeys(m for s in self.sources for m in s.metrics)
        own = [f"{f}@{self.k}" for f in FIGURES]
        return [m for m in own if m in names] + [m for m in names if m not in own]


def _source(s: Fields) -> StaleSource:
    return StaleSource(
        str(s.need("name")),
        dict(s.obj("metrics").data),
        [(str(c.need("case_id")), [i.data for i in c.each("stale")]) for c in s.each("offending_cases")],
        int(s.obj("errors").need("failed")),
        s.opt("not_verified"),
    )


def _stale_text(item: Mapping[str, Any]) -> str:
    """``#1 acme-v2 (active acme-v3: #2)``: where a superseded version ranked and where its active one did."""
    active_rank = item.get("active_rank")
    where = f"#{active_rank}" if active_rank else "not retrieved"
    return f"#{item.get('rank')} {item.get('doc_id')} (active {item.get('active_doc_id') or '-'}: {where})"


class StaleAuditKind(ReportKind):
    name = "stale-audit"
    required = ("k", "sources[].name", "sources[].metrics", "sources[].offending_cases")

    def typed(self, report: Fields) -> StaleAuditReport:
        return StaleAuditReport(int(report.need("k")), [_source(s) for s in report.each("sources")])

    def title(self, report: Mapping[str, Any]) -> str:
        names = [str(s.get("name")) for s in report.get("sources", []) if isinstance(s, Mapping)]
        return f"stale versions served by {', '.join(names) or 'no source'}"

    def document(self, report: StaleAuditReport) -> Document:
        """The figures of every source, why a source's figures check nothing, then its offending cases."""
        figures = report.figures()
        table = Table(
            (Column("source"), *(Column(f, "number") for f in figures), Column("offending", "count"),
             Column("failed", "count")),
            tuple((s.name, *(s.metrics.get(f) for f in figures), len(s.offending), s.failed) for s in report.sources),
        )  # fmt: skip
        verdicts = tuple(
            Verdict("stale versions", "not_verified", f"{s.name}: {s.not_verified}")
            for s in report.sources
            if s.not_verified
        )
        offending = tuple(
            Items(
                f"{s.name}: {len(s.offending)} offending cases",
                tuple((case_id, ", ".join(_stale_text(i) for i in stale)) for case_id, stale in s.offending),
            )
            for s in report.sources
            if s.offending
        )
        blocks: tuple[Block, ...] = (table, *verdicts, *offending, Paragraph(MEANING, hint=True))
        return Document((Section("stale", f"Stale versions in the top {report.k}", blocks),))


KIND = StaleAuditKind()
