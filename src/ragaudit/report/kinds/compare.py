"""The ``compare`` report kind (ragaudit compare): paired significance of systems against a baseline."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ragaudit.report.kinds.base import ReportKind

if TYPE_CHECKING:
    from ragaudit.report.html_parts import Section
    from ragaudit.report.view import ReportView


class CompareKind(ReportKind):
    name = "compare"
    required = ("comparisons[].metric", "comparisons[].system")
    schema: ClassVar[Mapping[str, Any]] = {"$ref": "#/$defs/compare_report"}

    def title(self, report: Mapping[str, Any]) -> str:
        return f"{', '.join(map(str, report.get('systems', [])))} vs {report.get('baseline')}"

    def markdown(self, view: ReportView) -> list[str]:
        from ragaudit.artifacts.escape import escape_md as md
        from ragaudit.report.markdown import _comparisons

        report = view.report
        return [
            f"Baseline **{md(report.get('baseline', ''))}**; bold Δ = significant at α = "
            f"{report.get('alpha')} after {md(report.get('correction', ''))} correction.",
            "",
            *_comparisons(report["comparisons"]),
            "",
        ]

    def html(self, view: ReportView) -> list[Section]:
        from ragaudit.report.html_experiments import compare_section

        return [compare_section(view)]


KIND = CompareKind()
