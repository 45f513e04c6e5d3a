"""The ``compare`` report kind (ragaudit compare): paired significance of systems against a baseline."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ragaudit.artifacts.tables import delta_cells, delta_ci_label, fmt_number, render_table
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.fields import Fields, Holes, Paired

if TYPE_CHECKING:
    from ragaudit.report.html_parts import Section
    from ragaudit.report.view import ReportView


@dataclass(frozen=True)
class CompareReport:
    """A compare report, typed: every comparison's ``metric`` and ``system`` are required."""

    baseline: str | None
    systems: list[str]
    alpha: float | None
    correction: str | None
    n_resamples: int | None
    comparisons: list[Paired]
    holes: list[Holes]
    """Each system's judged share of the top k, baseline first (empty in an older report)."""


class CompareKind(ReportKind):
    name = "compare"
    required = ("comparisons[].metric", "comparisons[].system")
    schema: ClassVar[Mapping[str, Any]] = {"$ref": "#/$defs/compare_report"}

    def typed(self, report: Fields) -> CompareReport:
        alpha, resamples = report.opt("alpha"), report.opt("n_resamples")
        return CompareReport(
            baseline=None if report.opt("baseline") is None else str(report.opt("baseline")),
            systems=report.texts("systems"),
            alpha=float(alpha) if isinstance(alpha, (int, float)) else None,
            correction=None if report.opt("correction") is None else str(report.opt("correction")),
            n_resamples=resamples if isinstance(resamples, int) else None,
            comparisons=[Paired.read(c) for c in report.each("comparisons")],
            holes=Holes.all_in(report),
        )

    def title(self, report: Mapping[str, Any]) -> str:
        typed = self.from_json(report)
        return f"{', '.join(typed.systems)} vs {typed.baseline}"

    def terminal(self, report: CompareReport, limit: int = 10) -> list[str]:
        """The table of paired comparisons and what the star means."""
        rows = [
            [c.metric, c.system, fmt_number(c.baseline_mean), fmt_number(c.system_mean), *delta_cells(c.data)]
            for c in report.comparisons
        ]
        headers = ["metric", "system", "baseline", "system", "delta"]
        ci = delta_ci_label([c.data for c in report.comparisons])
        from ragaudit.report.holes_power import holes_terminal, power_terminal

        return [
            render_table([*headers, ci, "p (Holm)", "W/T/L"], rows),
            f"baseline: {report.baseline}; * = significant at alpha {report.alpha} after Holm correction "
            f"across {len(rows)} comparisons (paired randomization test, {report.n_resamples} resamples)",
            *holes_terminal(report.holes),
            *power_terminal(report.comparisons),
        ]

    def markdown(self, view: ReportView) -> list[str]:
        from ragaudit.artifacts.escape import escape_md as md
        from ragaudit.report.holes_power import holes_markdown, power_markdown
        from ragaudit.report.markdown import _comparisons

        report: CompareReport = self.read(view)
        return [
            f"Baseline **{md(report.baseline or '')}**; bold Δ = significant at α = "
            f"{report.alpha} after {md(report.correction or '')} correction.",
            "",
            *_comparisons(report.comparisons),
            "",
            *holes_markdown(report.holes),
            *power_markdown(report.comparisons),
        ]

    def html(self, view: ReportView) -> list[Section]:
        from ragaudit.report.holes_power import holes_html, power_html
        from ragaudit.report.html_experiments import compare_section

        report: CompareReport = self.read(view)
        extra = (holes_html(report.holes), power_html(report.comparisons))
        return [compare_section(report), *(s for s in extra if s is not None)]


KIND = CompareKind()
