"""The ``k-sweep`` report kind (ragaudit k-sweep): metric families by cut-off k (drawn by the sweep
sections every report shares)."""

from __future__ import annotations

from ragaudit.report.kinds.base import ReportKind


class KSweepKind(ReportKind):
    name = "k-sweep"
    required = ("families", "rows[].k")


KIND = KSweepKind()
