"""The ``ablation`` report kind (ragaudit ablate): the remove-one / add-one gain of each toggle."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.sections import part

if TYPE_CHECKING:
    from ragaudit.report.html_parts import Section
    from ragaudit.report.view import ReportView


class AblationKind(ReportKind):
    name = "ablation"
    required = ("variants", "gains")

    def title(self, report: Mapping[str, Any]) -> str:
        return f"components of {part(report, 'base').get('name', 'the pipeline')}"

    def markdown(self, view: ReportView) -> list[str]:
        from ragaudit.report.markdown import _ablation

        return _ablation(view.report)

    def html(self, view: ReportView) -> list[Section]:
        from ragaudit.report.html_experiments import ablation_section

        return [ablation_section(view)]


KIND = AblationKind()
