"""The ``check-answers`` (ragaudit check-answers) report kind."""

from __future__ import annotations

from ragaudit.report.kinds.base import ReportKind


class CheckAnswersKind(ReportKind):
    name = "check-answers"
    required = ()


KIND = CheckAnswersKind()
