"""The ``stale-audit`` (ragaudit audit-stale) report kind: superseded document versions in the top k."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragaudit.artifacts.tables import fmt_number, render_table
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.fields import Fields


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


def _source(s: Fields) -> StaleSource:
    return StaleSource(
        str(s.need("name")),
        dict(s.obj("metrics").data),
        [(str(c.need("case_id")), [i.data for i in c.each("stale")]) for c in s.each("offending_cases")],
        int(s.obj("errors").need("failed")),
        s.opt("not_verified"),
    )


class StaleAuditKind(ReportKind):
    name = "stale-audit"
    required = ("k", "sources[].name", "sources[].metrics", "sources[].offending_cases")

    def typed(self, report: Fields) -> StaleAuditReport:
        return StaleAuditReport(int(report.need("k")), [_source(s) for s in report.each("sources")])

    def terminal(self, report: StaleAuditReport, limit: int = 5) -> list[str]:
        """The figures of every source, then the first ``limit`` offending cases of each."""
        k = report.k
        rows = [
            [s.name, *(fmt_number(v) for v in s.metrics.values()), str(len(s.offending)), str(s.failed)]
            for s in report.sources
        ]
        headers = [
            "source",
            f"stale_share@{k}",
            f"stale_rate@{k}",
            f"stale_above_active@{k}",
            "offending",
            "failed",
        ]
        lines = [render_table(headers, rows)]
        lines += [
            f"stale versions: NOT VERIFIED - {s.name}: {s.not_verified}"
            for s in report.sources
            if s.not_verified
        ]
        for s in report.sources:
            if not s.offending:
                continue
            lines.append(f"{s.name}: {len(s.offending)} offending cases, e.g.")
            for case_id, stale in s.offending[:limit]:
                items = ", ".join(
                    f"#{i['rank']} {i['doc_id']} (active {i['active_doc_id'] or '-'}: "
                    f"{'#' + str(i['active_rank']) if i['active_rank'] else 'not retrieved'})"
                    for i in stale
                )
                lines.append(f"  {case_id}: {items}")
        return lines


KIND = StaleAuditKind()
