"""The ``rewrite-eval`` report kind (ragaudit eval-rewrite): baseline / rewrite and constraint checks."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.sections import part

if TYPE_CHECKING:
    from ragaudit.report.html_parts import Section
    from ragaudit.report.view import ReportView


class RewriteEvalKind(ReportKind):
    name = "rewrite-eval"
    required = ("rewriter", "metrics", "constraints")

    def title(self, report: Mapping[str, Any]) -> str:
        return f"{report['rewriter']} in {part(report, 'pipelines', 'baseline').get('name', 'the pipeline')}"

    def markdown(self, view: ReportView) -> list[str]:
        from ragaudit.report.markdown import _rewrite

        return _rewrite(view.report)

    def html(self, view: ReportView) -> list[Section]:
        from ragaudit.report.html_experiments import rewrite_section

        return [rewrite_section(view)]


KIND = RewriteEvalKind()
