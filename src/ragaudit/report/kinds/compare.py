"""The ``compare`` report kind (ragaudit compare): paired significance of systems against a baseline."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ragaudit.report.document import Document, Paragraph, Section
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.comparison import comparison_table, forest
from ragaudit.report.kinds.fields import Fields, Holes, Paired, number
from ragaudit.report.kinds.judged_power import holes_section, power_section
from ragaudit.report.kinds.run_outcome import failed_runs_section
from ragaudit.report.kinds.tenants import TenantComparisons, tenants_section


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
    notes: list[str]
    """The judged-share warnings."""
    tenant_tests: TenantComparisons | None = None
    """The paired test per tenant (None with one tenant, or in a report written before it)."""
    failed_runs: tuple[tuple[str, tuple[str, ...], float | None], ...] = ()
    """``(system, why its run failed, its recorded --max-error-rate)`` of each compared report whose run
    failed the exit rule."""


class CompareKind(ReportKind):
    name = "compare"
    required = ("comparisons[].metric", "comparisons[].system")
    schema: ClassVar[Mapping[str, Any]] = {"$ref": "#/$defs/compare_report"}
    shows_notes = True

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
            notes=report.texts("notes"),
            tenant_tests=TenantComparisons.read(report),
            failed_runs=tuple(
                (str(f.need("system")), tuple(f.texts("problems")), number(f.opt("max_error_rate")))
                for f in report.each("failed_runs", required=False)
            ),
        )

    def title(self, report: Mapping[str, Any]) -> str:
        typed = self.from_json(report)
        return f"{', '.join(typed.systems)} vs {typed.baseline}"

    def document(self, report: CompareReport) -> Document:
        """The paired comparisons (a forest plot on the page, the table, what the star means), then each
        the paired test per tenant (a tenant's significant loss that the overall delta hides is marked and
        named first), then each system's judged share of the top k with its warnings, then power."""
        rows = report.comparisons
        correction = "Holm" if "holm" in (report.correction or "holm").lower() else report.correction
        meaning = Paragraph(
            f"baseline: {report.baseline}; * = significant at alpha {report.alpha} after {correction} "
            f"correction across {len(rows)} comparisons (paired randomization test, {report.n_resamples} "
            "resamples)"
        )
        plot = forest(
            "paired deltas against the baseline with confidence intervals",
            [(f"{c.system} · {c.metric}", c) for c in rows],
        )
        sections = [
            failed_runs_section(report.failed_runs),
            Section("compare", "Comparison", (plot, comparison_table(rows), meaning)),
            tenants_section((), report.tenant_tests, rows, report.baseline),
            holes_section(report.holes, report.notes),
            power_section(rows),
        ]
        return Document(tuple(s for s in sections if s is not None))


KIND = CompareKind()
