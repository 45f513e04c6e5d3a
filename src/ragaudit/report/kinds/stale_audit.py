"""The ``stale-audit`` (ragaudit audit-stale) report kind."""

from __future__ import annotations

from ragaudit.report.kinds.base import ReportKind


class StaleAuditKind(ReportKind):
    name = "stale-audit"
    required = ()


KIND = StaleAuditKind()
