"""The ``chunking-sweep`` report kind (ragaudit sweep-chunking): one point per chunking configuration
(drawn by the chunking sections every report shares)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.sections import part


class ChunkingSweepKind(ReportKind):
    name = "chunking-sweep"
    required = ("points[].name", "points[].metrics")

    def title(self, report: Mapping[str, Any]) -> str:
        return f"chunking of {part(report, 'pipeline').get('name', 'the pipeline')}"


KIND = ChunkingSweepKind()
