"""Document blocks drawn inside the hooks of the kinds not yet migrated (``tenant-audit``), so the parts
they already build as blocks (a cut table) are escaped and formatted by the back-ends like any other."""

from __future__ import annotations

from collections.abc import Sequence

from ragaudit.report.document import Block, Document, Section
from ragaudit.report.draw.html import draw_html
from ragaudit.report.draw.markdown import draw_markdown


def blocks_html(blocks: Sequence[Block]) -> str:
    """The inner HTML of ``blocks`` (as a page section draws them)."""
    return "".join(inner for _, _, inner in draw_html(Document((Section("x", "x", tuple(blocks)),))))


def blocks_markdown(blocks: Sequence[Block]) -> list[str]:
    """The Markdown lines of ``blocks`` (without a section heading)."""
    return draw_markdown(Document((Section("x", "x", tuple(blocks)),)))[2:]
