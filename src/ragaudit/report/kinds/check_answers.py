"""The ``check-answers`` (ragaudit check-answers) report kind: the context report with groundedness,
abstention of the generated answers and attribution (the same typed view and terminal figures)."""

from __future__ import annotations

from ragaudit.report.kinds.context import ContextKind


class CheckAnswersKind(ContextKind):
    name = "check-answers"
    required = ()


KIND = CheckAnswersKind()
