"""The terminal back-end: a document as the lines a command prints (plain text, no escaping).

Section titles and ``hint`` paragraphs are for pages and are not printed; charts are not drawn (their figures are in the
tables beside them). A table is aligned (:func:`ragaudit.artifacts.tables.render_table`), an item of a
list is one whole line (never cut mid-sentence), the text inside :class:`Details` wraps at
:data:`WRAP` columns; a list or table longer than ``limit`` is cut with :func:`cut_note`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from ragaudit.artifacts.tables import render_table
from ragaudit.report.document import (
    CHARTS,
    Block,
    Details,
    Document,
    Heading,
    Items,
    KeyValues,
    Paragraph,
    Table,
    Verdict,
    cut_note,
    shown_rows,
)
from ragaudit.report.draw.cells import cell, text
from ragaudit.verdict import LABELS

WRAP = 104
"""Where the text inside :class:`Details` wraps."""


def draw_terminal(document: Document, limit: int = 10) -> list[str]:
    """The lines of ``document``; a list or table shows at most ``limit`` rows."""
    return [line for section in document.sections for line in _blocks(section.blocks, limit, "")]


def _blocks(blocks: Sequence[Block], limit: int, indent: str) -> list[str]:
    lines: list[str] = []
    for block in blocks:
        lines += _block(block, limit, indent)
    return lines


def _block(block: Block, limit: int, indent: str) -> list[str]:
    if isinstance(block, Heading):
        return [indent + block.text]
    if isinstance(block, Paragraph):
        if block.hint:
            return []  # an explanation for a page; the command's own output says what it needs
        if not indent:
            return [block.text]
        return textwrap.wrap(
            block.text, WRAP, initial_indent=indent, subsequent_indent=indent + "  ", break_on_hyphens=False
        )
    if isinstance(block, Verdict):
        return [f"{indent}{block.check}: {LABELS[block.state]} - {block.reason}"]
    if isinstance(block, KeyValues):
        return [indent + ", ".join(f"{label}={text(value)}" for label, value in block.pairs)]
    if isinstance(block, Table):
        shown, total = shown_rows(block.rows, block.total, limit, block.cut)
        numeric = [c.numeric for c in block.columns]
        left = numeric.index(True) if True in numeric else len(numeric)
        rows = [[cell(v, c) for v, c in zip(row, block.columns, strict=True)] for row in block.rows[:shown]]
        table = render_table([c.label for c in block.columns], rows, left)
        return [*table.splitlines(), *([cut_note(shown, total)] if shown < total else [])]
    if isinstance(block, Items):
        shown, total = shown_rows(block.items, block.total, limit)
        lines = [indent + block.intro] if block.intro else []
        for i, (lead, what) in enumerate(block.items[:shown]):
            lines.append(f"{indent}  {lead}{block.separator}{what}")
            lines += [f"{indent}         {line}" for line in (block.under[i] if i < len(block.under) else ())]
        return lines + ([f"{indent}  {cut_note(shown, total)}"] if shown < total else [])
    if isinstance(block, Details):
        return [f"{indent}{block.summary}:", *_blocks(block.blocks, limit, indent + "  ")]
    assert isinstance(block, CHARTS), f"no terminal drawing for {type(block).__name__}"
    return []
