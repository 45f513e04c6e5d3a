"""One :class:`ReportKind` per report kind, and the registry the renderers loop over."""

from ragaudit.errors import ReportFieldError
from ragaudit.report.kinds.base import KindReport, ReportKind
from ragaudit.report.kinds.registry import (
    GROUP,
    broken_kinds,
    load_kind,
    register_kind,
    registered_kinds,
    report_kind,
)

__all__ = [
    "GROUP",
    "KindReport",
    "ReportFieldError",
    "ReportKind",
    "broken_kinds",
    "load_kind",
    "register_kind",
    "registered_kinds",
    "report_kind",
]
