"""The ``gate`` (ragaudit gate; its verdict renders in every report's header) report kind."""

from __future__ import annotations

from ragaudit.report.kinds.base import ReportKind


class GateKind(ReportKind):
    name = "gate"
    required = ("passed", "gates")


KIND = GateKind()
