"""The ``tenant-audit`` (ragaudit audit-tenants) report kind."""

from __future__ import annotations

from ragaudit.report.kinds.base import ReportKind


class TenantAuditKind(ReportKind):
    name = "tenant-audit"
    required = ()


KIND = TenantAuditKind()
