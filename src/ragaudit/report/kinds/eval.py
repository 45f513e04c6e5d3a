"""The ``eval`` report kind (ragaudit eval / ragaudit.evaluate): one system on one dataset."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ragaudit.report.kinds.base import ReportKind

if TYPE_CHECKING:
    from ragaudit.report.view import ReportView


class EvalKind(ReportKind):
    name = "eval"
    required = ("metrics", "counts", "per_case[].id")
    schema: ClassVar[Mapping[str, Any]] = {"$ref": "#/$defs/eval_report"}
    problems_in_body = True

    def markdown(self, view: ReportView) -> list[str]:
        from ragaudit.report import markdown as md

        report = view.report
        lines = [*md._metrics(view), "", *md._counts(report), "", *md._changes(view), *md._security(view)]
        return lines + md._problems(report)


KIND = EvalKind()
