"""The Markdown back-end: a document as GitHub-flavoured Markdown (a pull-request comment).

Every text goes through :func:`ragaudit.artifacts.escape.escape_md`; charts are not drawn (their
figures are in the tables beside them); a list or table longer than :data:`LIMIT` is cut with
:func:`cut_note`.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragaudit.artifacts.escape import escape_md as md
from ragaudit.report.document import (
    CHARTS,
    Block,
    Column,
    Details,
    Document,
    Heading,
    Items,
    KeyValues,
    Paragraph,
    Table,
    Value,
    Verdict,
    cut_note,
    shown_rows,
)
from ragaudit.report.draw.cells import cell, strong, text
from ragaudit.verdict import LABELS

LIMIT = 10
"""Rows of a list or table a pull-request comment shows."""
MARKS = {"pass": "✅", "fail": "❌", "not_verified": "⚠️"}
"""Only a verified pass gets a check mark."""


def draw_markdown(document: Document, limit: int = LIMIT) -> list[str]:
    """The Markdown lines of ``document``: each section a ``####`` heading and its blocks."""
    lines: list[str] = []
    for section in document.sections:
        lines += [f"#### {md(section.title)}", "", *_blocks(section.blocks, limit)]
    return lines


def table_lines(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[bool]) -> list[str]:
    """A Markdown table of escaped cells; numeric columns are right-aligned."""
    align = ["---:" if n else "---" for n in numeric]
    return [
        "| " + " | ".join(headers) + " |",
        "| " + " | ".join(align) + " |",
        *("| " + " | ".join(row) + " |" for row in rows),
    ]


def _cell(value: Value, column: Column) -> str:
    shown = md(cell(value, column))
    return f"**{shown}**" if strong(value) else shown


def _blocks(blocks: Sequence[Block], limit: int) -> list[str]:
    lines: list[str] = []
    for block in blocks:
        lines += _block(block, limit)
    return lines


def _block(block: Block, limit: int) -> list[str]:
    if isinstance(block, Heading):
        return [f"**{md(block.text)}**", ""]
    if isinstance(block, Paragraph):
        return [f"_{md(block.text)}_" if block.hint else md(block.text), ""]
    if isinstance(block, Verdict):
        return [f"**{MARKS[block.state]} {md(block.check)}: {LABELS[block.state]}**: {md(block.reason)}", ""]
    if isinstance(block, KeyValues):
        return [" · ".join(f"**{md(label)}** {md(text(value))}" for label, value in block.pairs), ""]
    if isinstance(block, Table):
        shown, total = shown_rows(block.rows, block.total, limit, block.cut)
        rows = [
            [md(cell(v, c)) for v, c in zip(row, block.columns, strict=True)] for row in block.rows[:shown]
        ]
        table = table_lines([md(c.label) for c in block.columns], rows, [c.numeric for c in block.columns])
        return [*table, *(["", f"_{md(cut_note(shown, total))}_"] if shown < total else []), ""]
    if isinstance(block, Items):
        shown, total = shown_rows(block.items, block.total, limit)
        lines = [md(block.intro), ""] if block.intro else []
        for i, (lead, what) in enumerate(block.items[:shown]):
            lines.append(f"- {md(lead + block.separator + what)}")
            lines += [
                f"  - {md(line.removeprefix('- '))}"
                for line in (block.under[i] if i < len(block.under) else ())
            ]
        lines += [f"- _{md(cut_note(shown, total))}_"] if shown < total else []
        return [*lines, ""]
    if isinstance(block, Details):
        return [
            f"<details><summary>{md(block.summary)}</summary>",
            "",
            *_blocks(block.blocks, limit),
            "</details>",
            "",
        ]
    assert isinstance(block, CHARTS), f"no Markdown drawing for {type(block).__name__}"
    return []
