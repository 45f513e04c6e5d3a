"""The ``k-sweep`` report kind (ragaudit k-sweep): metric families by cut-off k (drawn by the sweep
sections every report shares)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragaudit.artifacts.tables import fmt_number, render_table
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.fields import Fields


@dataclass(frozen=True)
class KSweepReport:
    """A k-sweep report, typed: ``families`` and every row's ``k`` are required; a family's value or the
    row's ``context_tokens`` reads as None (``-``) where a row leaves it out."""

    families: list[str]
    rows: list[dict[str, Any]]
    answerable: int | None
    answered: int | None
    notes: list[str]


class KSweepKind(ReportKind):
    name = "k-sweep"
    required = ("families", "rows[].k")

    def typed(self, report: Fields) -> KSweepReport:
        families = report.texts("families")
        rows = [
            {
                "k": int(r.need("k")),
                "context_tokens": r.opt("context_tokens"),
                **{f: r.opt(f) for f in families},
            }
            for r in report.each("rows")
        ]
        cases = report.obj("cases", required=False)
        return KSweepReport(
            families, rows, cases.opt("answerable"), cases.opt("answered"), report.texts("notes")
        )

    def k_sweep(self, report: KSweepReport) -> dict[str, Any] | None:
        """One series ``<family>@k`` per family."""
        if not (report.rows and report.families):
            return None
        return {
            "k": [r["k"] for r in report.rows],
            "series": [{"name": f"{f}@k", "values": [r[f] for r in report.rows]} for f in report.families],
        }

    def terminal(self, report: KSweepReport, limit: int = 10) -> list[str]:
        """Each family's mean at every k and the mean context tokens, then what the means are over."""
        headers = ["k", *(f"{f}@k" for f in report.families), "tokens"]
        rows = [
            [str(r["k"]), *(fmt_number(r[f]) for f in report.families), fmt_number(r["context_tokens"], 1)]
            for r in report.rows
        ]
        return [
            render_table(headers, rows),
            f"means over {report.answerable} answerable cases (missing/errors score 0); tokens: mean over "
            f"{report.answered} answered cases of the top-k contents",
            *(f"note: {note}" for note in report.notes),
        ]


KIND = KSweepKind()
