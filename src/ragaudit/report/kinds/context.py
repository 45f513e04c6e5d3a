"""The ``context`` (ragaudit context) report kind."""

from __future__ import annotations

from ragaudit.report.kinds.base import ReportKind


class ContextKind(ReportKind):
    name = "context"
    required = ()


KIND = ContextKind()
