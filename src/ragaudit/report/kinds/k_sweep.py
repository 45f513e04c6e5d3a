"""The ``k-sweep`` report kind (ragaudit k-sweep): metric families by cut-off k."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragaudit.report.document import Block, Column, Document, Lines, Paragraph, Section, Table
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
    shows_notes = True

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

    def document(self, report: KSweepReport) -> Document:
        """Each family's mean at every k (a line per family, and the table), the mean context tokens,
        what the means are over, and the notes."""
        families = report.families
        table = Table(
            (Column("k"), *(Column(f"{f}@k", "number") for f in families), Column("tokens", "number", 1)),
            tuple((str(r["k"]), *(r[f] for f in families), r["context_tokens"]) for r in report.rows),
            cut=False,
        )
        blocks: list[Block] = []
        if report.rows and families:
            series = tuple((f"{f}@k", tuple(r[f] for r in report.rows)) for f in families)
            blocks.append(Lines("metrics by k", "k", tuple(str(r["k"]) for r in report.rows), series))
        blocks += [
            table,
            Paragraph(
                f"means over {report.answerable} answerable cases (missing/errors score 0); tokens: mean over "
                f"{report.answered} answered cases of the top-k contents"
            ),
            *(Paragraph(f"note: {note}") for note in report.notes),
        ]
        return Document((Section("k-sweep", "k-sweep", tuple(blocks)),))


KIND = KSweepKind()
