"""The HTML section of the compare kind (not yet drawn through a document; benchmark:
:mod:`ragaudit.report.html_benchmark`). It reads the compare kind's typed view through
:class:`Compared`, so this module does not import the kind that calls it (no import circle)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from ragaudit.artifacts.escape import escape_html as esc
from ragaudit.report.html_parts import Section, comparison_table, forest

if TYPE_CHECKING:
    from ragaudit.report.kinds.fields import Paired


class Compared(Protocol):
    """What the section reads of a compare report (``ragaudit.report.kinds.compare.CompareReport``)."""

    @property
    def baseline(self) -> str | None: ...
    @property
    def alpha(self) -> float | None: ...
    @property
    def correction(self) -> str | None: ...
    @property
    def comparisons(self) -> Sequence[Paired]: ...


def compare_section(report: Compared) -> Section:
    rows = report.comparisons
    hint = (
        f'<p class="hint">Baseline <b>{esc(report.baseline or "")}</b>; significant at α = '
        f"{esc(report.alpha)} after {esc(report.correction or '')} correction.</p>"
    )
    return "compare", "Comparison", hint + forest(rows, True) + comparison_table(rows, True)
