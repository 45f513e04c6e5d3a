"""The ``benchmark`` report kind (ragaudit bench / demo): several pipelines side by side."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from ragaudit.report.kinds.base import ReportKind

if TYPE_CHECKING:
    from ragaudit.report.html_parts import Section
    from ragaudit.report.view import ReportView


class BenchmarkKind(ReportKind):
    name = "benchmark"
    required = ("pipelines[].name", "pipelines[].metrics", "comparisons")
    schema: ClassVar[Mapping[str, Any]] = {"$ref": "#/$defs/benchmark_report"}

    def title(self, report: Mapping[str, Any]) -> str:
        return ", ".join(str(p["name"]) for p in report["pipelines"])

    def markdown(self, view: ReportView) -> list[str]:
        from ragaudit.report.markdown import _benchmark

        return _benchmark(view.report)

    def html(self, view: ReportView) -> list[Section]:
        from ragaudit.report.html_experiments import benchmark_section

        return [benchmark_section(view)]


KIND = BenchmarkKind()
