"""The ``rewrite-eval`` report kind (ragaudit eval-rewrite): baseline / rewrite and constraint checks."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragaudit.report.document import Block, Column, Document, Items, Paragraph, Section, Table, Verdict
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.comparison import delta_columns, delta_values, forest
from ragaudit.report.kinds.fields import Fields, Latency, Paired, count, number, significance_of
from ragaudit.report.sections import constraint_verdict, part

Constraint = tuple[str, str]
"""``(kind, text)`` of a query constraint (``("entity", "pro")``)."""


@dataclass(frozen=True)
class FlaggedRewrite:
    """A rewrite that lost an entity or constraint: what was lost or swapped, and the primary metric's change."""

    id: str
    tenant_id: str | None
    query: str
    rewritten: str | None
    lost: list[Constraint]
    """Every lost constraint (a swapped one too)."""
    swapped: list[tuple[Constraint, Constraint]]
    """``(before, after)`` of each swap."""
    delta: float | None

    def lost_text(self) -> list[str]:
        """The lost constraints that were not swapped for another, as text (``entity pro``)."""
        moved = {before for before, _ in self.swapped}
        return [_text(c) for c in self.lost if c not in moved]

    def swapped_text(self) -> list[str]:
        """``entity Professional → entity Enterprise`` of each swap."""
        return [f"{_text(a)} → {_text(b)}" for a, b in self.swapped]


def _text(c: Constraint) -> str:
    return f"{c[0]} {c[1]}".strip()


@dataclass(frozen=True)
class Constraints:
    """The constraint-preservation summary (counts as written; None where absent)."""

    cases: int | None
    rewritten: int | None
    flagged: int | None
    flagged_with_gain: int | None
    swapped: int | None
    lost_by_kind: dict[str, Any]
    data: Mapping[str, Any]
    """As written (:func:`ragaudit.report.sections.constraint_verdict` reads it)."""


@dataclass(frozen=True)
class RewriteMetric:
    """One metric: baseline, with the rewrite, the delta and the paired comparison (None: not compared)."""

    metric: str
    baseline: Any
    rewrite: Any
    delta: Any
    comparison: Paired | None


@dataclass(frozen=True)
class RewriteLatency:
    baseline: Latency | None
    rewrite: Latency | None
    added: Latency | None
    rewriter: Latency | None


@dataclass(frozen=True)
class RewriteEvalReport:
    """A rewrite-eval report, typed: ``rewriter``, ``metrics`` and ``constraints`` are required."""

    rewriter: str
    primary_metric: str
    metrics: list[RewriteMetric]
    comparisons: list[Paired]
    significance: tuple[Any, str]
    latency: RewriteLatency | None
    constraints: Constraints
    flagged: list[FlaggedRewrite]
    notes: list[str]


def _constraint(c: Fields) -> Constraint:
    return str(c.opt("kind") or "?"), str(c.opt("text") or "")


def _flagged(case: Fields, primary: str) -> FlaggedRewrite:
    check = case.obj("constraints", required=False)
    tenant, rewritten = case.opt("tenant_id"), case.opt("rewritten_query")
    return FlaggedRewrite(
        str(case.need("id")),
        None if tenant is None else str(tenant),
        str(case.opt("query") or ""),
        None if rewritten is None else str(rewritten),
        [_constraint(c) for c in check.each("lost", required=False)],
        [
            (_constraint(w.obj("from", required=False)), _constraint(w.obj("to", required=False)))
            for w in check.each("swapped", required=False)
        ],
        number(case.obj("metrics", required=False).obj("delta", required=False).opt(primary)),
    )


def _constraints(cons: Fields) -> Constraints:
    cases, rewritten, flagged, with_gain, swapped = (
        count(cons.opt(k)) for k in ("cases", "rewritten", "flagged", "flagged_with_gain", "swapped")
    )
    lost_by_kind = dict(cons.obj("lost_by_kind", required=False).data)
    return Constraints(cases, rewritten, flagged, with_gain, swapped, lost_by_kind, cons.data)


def _metrics(report: Fields, comparisons: list[Paired]) -> list[RewriteMetric]:
    metrics = report.obj("metrics")
    rewrite, delta = metrics.obj("rewrite", required=False), metrics.obj("delta", required=False)
    compared = {c.metric: c for c in comparisons}
    return [
        RewriteMetric(str(m), value, rewrite.opt(m), delta.opt(m), compared.get(str(m)))
        for m, value in metrics.obj("baseline", required=False).data.items()
    ]


def _latency(latency: Fields) -> RewriteLatency | None:
    if not latency.data:
        return None
    return RewriteLatency(
        *(Latency.read(latency.opt(k)) for k in ("baseline", "rewrite", "added", "rewriter"))
    )


class RewriteEvalKind(ReportKind):
    name = "rewrite-eval"
    required = ("rewriter", "metrics", "constraints")
    shows_notes = True

    def typed(self, report: Fields) -> RewriteEvalReport:
        primary = str(report.opt("primary_metric") or "")
        comparisons = [Paired.read(c, system="") for c in report.each("comparisons", required=False)]
        return RewriteEvalReport(
            str(report.need("rewriter")),
            primary,
            _metrics(report, comparisons),
            comparisons,
            significance_of(report),
            _latency(report.obj("latency_ms", required=False)),
            _constraints(report.obj("constraints")),
            [_flagged(c, primary) for c in report.each("per_case", required=False) if c.opt("flagged")],
            report.texts("notes"),
        )

    def document(self, report: RewriteEvalReport) -> Document:
        """Constraint preservation (the verdict), metrics with significance, latency, the constraint
        counts and the flagged cases, then the notes."""
        primary = report.primary_metric
        compared = [r.comparison for r in report.metrics]
        table = Table(
            (
                Column("metric"),
                Column("baseline", "number"),
                Column("rewrite", "number"),
                *delta_columns(compared, short=False),
            ),
            tuple(
                (
                    r.metric,
                    r.baseline,
                    r.rewrite,
                    *(delta_values(r.comparison) if r.comparison else (r.delta, None, None, None)),
                )
                for r in report.metrics
            ),
            cut=False,
        )
        verdict = constraint_verdict(report.constraints.data)
        blocks: list[Block] = [
            Verdict(verdict.check, verdict.state, verdict.reason),
            forest("rewrite minus baseline per metric", [(c.metric, c) for c in compared if c is not None]),
            table,
            Paragraph(
                f"* = significant at alpha {report.significance[0]} (paired randomization test, "
                f"Holm-corrected across {len(report.comparisons)} metrics); rewriter: {report.rewriter}"
            ),
        ]
        lat = report.latency
        if lat is not None and lat.added is not None:
            blocks.append(_latency_table(lat))
        blocks.append(_constraints_table(report.constraints, primary))
        if report.flagged:
            blocks.append(
                Items(
                    f"flagged rewrites ({len(report.flagged)}): each lost an entity or constraint of its "
                    "question, whatever its metrics say",
                    tuple((f"FLAG {case.id}", _flag_text(case, primary)) for case in report.flagged),
                )
            )
        blocks += [Paragraph(f"note: {n}") for n in report.notes]
        return Document((Section("rewrite", "Rewrite", tuple(blocks)),))

    def pipeline(self, report: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The pipeline with the rewrite stage."""
        return part(report, "pipelines", "rewrite") or None

    def title(self, report: Mapping[str, Any]) -> str:
        return f"{report['rewriter']} in {part(report, 'pipelines', 'baseline').get('name', 'the pipeline')}"


def _latency_table(lat: RewriteLatency) -> Table:
    """The p50 with and without the rewrite and what the rewrite adds per query (a missing figure reads
    as every missing value, never as 0 or ``nan``)."""
    base, rewrite, added, rewriter = lat.baseline, lat.rewrite, lat.added, lat.rewriter
    columns = (
        Column("latency ms"),
        Column("baseline p50", "number", 2),
        Column("with rewrite p50", "number", 2),
        Column("added mean", "signed", 2),
        Column("added p50", "signed", 2),
        Column("added p95", "signed", 2),
        Column("in the rewriter mean", "number", 2),
    )
    row = (
        "per query",
        base.p50 if base else None,
        rewrite.p50 if rewrite else None,
        added.mean if added else None,
        added.p50 if added else None,
        added.p95 if added else None,
        rewriter.mean if rewriter else None,
    )
    return Table(columns, (row,), cut=False)


def _constraints_table(s: Constraints, primary: str) -> Table:
    """How many queries the rewrite changed, how many lost something (and of those, how many improved
    the primary metric all the same), the swaps and what was lost by kind."""
    lost = ", ".join(f"{k} {v}" for k, v in s.lost_by_kind.items()) or "none"
    columns = (
        Column("constraints"),
        Column("queries", "count"),
        Column("changed", "count"),
        Column("flagged (lost something)", "count"),
        Column(f"flagged although {primary or 'the primary metric'} improved", "count"),
        Column("swaps", "count"),
        Column("lost by kind"),
    )
    return Table(
        columns,
        (("rewrites", s.cases, s.rewritten, s.flagged, s.flagged_with_gain, s.swapped, lost),),
        cut=False,
    )


def _flag_text(case: FlaggedRewrite, primary: str) -> str:
    """``'query' -> 'rewritten': lost entity 'pro'; swapped 'a' -> 'b' (nDCG@10 -0.12)``."""
    lost_items = ", ".join(f"{kind} {text!r}" for kind, text in case.lost)
    swaps = "; ".join(f"{a[1]!r} -> {b[1]!r}" for a, b in case.swapped)
    gain = case.delta
    return (
        f"{case.query!r} -> "
        + (repr(case.rewritten) if case.rewritten is not None else "(no rewrite recorded)")
        + f": lost {lost_items}"
        + (f"; swapped {swaps}" if swaps else "")
        + (f" ({primary} {gain:+.2f})" if gain is not None and not math.isnan(gain) else "")
    )


KIND = RewriteEvalKind()
