"""The judged-share and power sections for the kinds that still draw themselves (eval's page, benchmark),
drawn from the shared document sections of :mod:`ragaudit.report.kinds.judged_power`."""

from __future__ import annotations

from collections.abc import Sequence

from ragaudit.report.document import Document, Section
from ragaudit.report.draw.html import PageSection, draw_html
from ragaudit.report.draw.markdown import draw_markdown
from ragaudit.report.draw.terminal import draw_terminal
from ragaudit.report.kinds.fields import Holes, Paired
from ragaudit.report.kinds.judged_power import holes_section, power_section


def _sections(holes: Sequence[Holes], rows: Sequence[Paired], notes: Sequence[str]) -> Document:
    made = (holes_section(holes, notes), power_section(rows))
    return Document(tuple(s for s in made if isinstance(s, Section)))


def holes_power_terminal(holes: Sequence[Holes], rows: Sequence[Paired], notes: Sequence[str]) -> list[str]:
    return draw_terminal(_sections(holes, rows, notes))


def holes_power_markdown(holes: Sequence[Holes], rows: Sequence[Paired]) -> list[str]:
    """Without the notes: the page lists them."""
    return draw_markdown(_sections(holes, rows, ()))


def holes_power_html(holes: Sequence[Holes], rows: Sequence[Paired]) -> list[PageSection]:
    """Without the notes: the page lists them."""
    return draw_html(_sections(holes, rows, ()))
