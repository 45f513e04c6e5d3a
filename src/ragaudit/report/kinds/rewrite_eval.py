"""The ``rewrite-eval`` report kind (ragaudit eval-rewrite): baseline / rewrite and constraint checks."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragaudit.artifacts.tables import delta_cells, delta_ci_label, fmt_number, render_table
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.fields import Fields, number
from ragaudit.report.sections import part

if TYPE_CHECKING:
    from ragaudit.report.html_parts import Section
    from ragaudit.report.view import ReportView


@dataclass(frozen=True)
class FlaggedRewrite:
    """A rewrite that lost an entity or constraint: what was lost or swapped, and the primary metric's change."""

    id: str
    query: str
    rewritten: Any
    lost: list[tuple[str, str]]
    """``(kind, text)`` of each lost constraint."""
    swapped: list[tuple[str, str]]
    """``(text before, text after)`` of each swap."""
    delta: float | None


@dataclass(frozen=True)
class RewriteEvalReport:
    """A rewrite-eval report, typed: ``rewriter``, ``metrics`` and ``constraints`` are required."""

    rewriter: str
    primary_metric: str
    comparisons: list[Mapping[str, Any]]
    alpha: Any
    latency: Mapping[str, Any]
    constraints: Mapping[str, Any]
    flagged: list[FlaggedRewrite]
    notes: list[str]


def _flagged(case: Fields, primary: str) -> FlaggedRewrite:
    check = case.obj("constraints", required=False)
    return FlaggedRewrite(
        str(case.need("id")),
        str(case.need("query")),
        case.opt("rewritten_query"),
        [(str(c.need("kind")), str(c.need("text"))) for c in check.each("lost", required=False)],
        [
            (str(w.obj("from").need("text")), str(w.obj("to").need("text")))
            for w in check.each("swapped", required=False)
        ],
        number(case.obj("metrics", required=False).obj("delta", required=False).opt(primary)),
    )


class RewriteEvalKind(ReportKind):
    name = "rewrite-eval"
    required = ("rewriter", "metrics", "constraints")

    def typed(self, report: Fields) -> RewriteEvalReport:
        primary = str(report.opt("primary_metric") or "")
        alpha = report.obj("significance", required=False).opt("alpha")
        return RewriteEvalReport(
            str(report.need("rewriter")),
            primary,
            [c.data for c in report.each("comparisons", required=False)],
            0.05 if alpha is None else alpha,
            report.obj("latency_ms", required=False).data,
            report.obj("constraints").data,
            [_flagged(c, primary) for c in report.each("per_case", required=False) if c.opt("flagged")],
            report.texts("notes"),
        )

    def terminal(self, report: RewriteEvalReport, limit: int = 10) -> list[str]:
        """Metrics with significance, latency, the constraint summary and the first ``limit`` flagged cases."""
        rows = [
            [str(c["metric"]), fmt_number(c["baseline_mean"]), fmt_number(c["system_mean"]), *delta_cells(c)]
            for c in report.comparisons
        ]
        headers = [
            "metric",
            "baseline",
            "rewrite",
            "delta",
            delta_ci_label(report.comparisons),
            "p (Holm)",
            "W/T/L",
        ]
        lines = [
            render_table(headers, rows),
            f"* = significant at alpha {report.alpha} (paired randomization test, "
            f"Holm-corrected across {len(rows)} metrics); rewriter: {report.rewriter}",
        ]
        lat = report.latency
        if lat.get("added") is not None:
            lines.append(
                f"latency ms: baseline p50 {lat['baseline']['p50']:.2f}, with rewrite p50 "
                f"{lat['rewrite']['p50']:.2f}; added per query mean {lat['added']['mean']:+.2f} "
                f"(p50 {lat['added']['p50']:+.2f}, p95 {lat['added']['p95']:+.2f})"
                + (f"; in the rewriter mean {lat['rewriter']['mean']:.2f}" if lat.get("rewriter") else "")
            )
        s = report.constraints
        lost = ", ".join(f"{k} {v}" for k, v in s["lost_by_kind"].items()) or "none"
        lines.append(
            f"constraints: {s['rewritten']} of {s['cases']} queries changed; {s['flagged']} flagged "
            f"(lost something; {s['flagged_with_gain']} of them although {report.primary_metric} improved); "
            f"lost by kind: {lost}; swaps {s['swapped']}"
        )
        for case in report.flagged[:limit]:
            lost_items = ", ".join(f"{kind} {text!r}" for kind, text in case.lost)
            swaps = "; ".join(f"{a!r} -> {b!r}" for a, b in case.swapped)
            gain = case.delta
            lines.append(
                f"  FLAG {case.id}: {case.query!r} -> {case.rewritten!r}: lost {lost_items}"
                + (f"; swapped {swaps}" if swaps else "")
                + (
                    f" ({report.primary_metric} {gain:+.2f})"
                    if gain is not None and not math.isnan(gain)
                    else ""
                )
            )
        if len(report.flagged) > limit:
            lines.append(f"  ... and {len(report.flagged) - limit} more flagged cases in the JSON report")
        return lines + [f"note: {n}" for n in report.notes[:10]]

    def title(self, report: Mapping[str, Any]) -> str:
        return f"{report['rewriter']} in {part(report, 'pipelines', 'baseline').get('name', 'the pipeline')}"

    def markdown(self, view: ReportView) -> list[str]:
        from ragaudit.report.markdown import _rewrite

        return _rewrite(view.report)

    def html(self, view: ReportView) -> list[Section]:
        from ragaudit.report.html_experiments import rewrite_section

        return [rewrite_section(view)]


KIND = RewriteEvalKind()
