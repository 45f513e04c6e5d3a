"""HTML sections of the experiment reports: compare, ablation, reranker-eval, rewrite-eval (benchmark:
:mod:`ragaudit.report.html_benchmark`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ragaudit.artifacts.escape import escape_html as esc
from ragaudit.report.html_parts import (
    Section,
    comparison_table,
    forest,
)

if TYPE_CHECKING:
    from ragaudit.report.kinds.compare import CompareReport


def compare_section(report: CompareReport) -> Section:
    rows = report.comparisons
    hint = (
        f'<p class="hint">Baseline <b>{esc(report.baseline or "")}</b>; significant at α = '
        f"{esc(report.alpha)} after {esc(report.correction or '')} correction.</p>"
    )
    return "compare", "Comparison", hint + forest(rows, True) + comparison_table(rows, True)
