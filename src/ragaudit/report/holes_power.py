"""The judged-share section of the eval page (the eval kind still draws itself), drawn from the shared
document section of :mod:`ragaudit.report.kinds.judged_power`."""

from __future__ import annotations

from collections.abc import Sequence

from ragaudit.report.document import Document
from ragaudit.report.draw.html import PageSection, draw_html
from ragaudit.report.kinds.fields import Holes
from ragaudit.report.kinds.judged_power import holes_section


def holes_html(holes: Sequence[Holes]) -> list[PageSection]:
    """Without the notes: the page lists them."""
    section = holes_section(holes)
    return draw_html(Document((section,))) if section is not None else []
