"""The ``reranker-eval`` report kind (ragaudit eval-reranker): before / after / oracle per metric."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.sections import part

if TYPE_CHECKING:
    from ragaudit.report.html_parts import Section
    from ragaudit.report.view import ReportView


class RerankerEvalKind(ReportKind):
    name = "reranker-eval"
    required = ("reranker", "summary[].metric")

    def title(self, report: Mapping[str, Any]) -> str:
        return f"{report['reranker']} in {part(report, 'pipeline').get('name', 'the pipeline')}"

    def markdown(self, view: ReportView) -> list[str]:
        from ragaudit.report.markdown import _reranker

        return _reranker(view.report)

    def html(self, view: ReportView) -> list[Section]:
        from ragaudit.report.html_experiments import reranker_section

        return [reranker_section(view)]


KIND = RerankerEvalKind()
