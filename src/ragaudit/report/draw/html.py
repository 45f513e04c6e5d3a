"""The HTML back-end: a document as the sections of the report page (``(anchor, title, inner HTML)``).

Every text goes through :func:`ragaudit.artifacts.escape.escape_html` here (the SVG charts of
:mod:`ragaudit.report.svg` escape their labels); a list or table longer than :data:`LIMIT` is cut with
:func:`cut_note`. The classes used (``hint``, ``kv``, ``num``, ``ids``, ``ok-line``...) are the page's
(:mod:`ragaudit.report.html_assets`).
"""

from __future__ import annotations

from ragaudit.artifacts.escape import escape_html as esc
from ragaudit.report import svg
from ragaudit.report.document import (
    CHARTS,
    Badge,
    Block,
    Column,
    Details,
    Document,
    DotPlot,
    Forest,
    Heading,
    Histogram,
    Items,
    KeyValues,
    Lead,
    Lines,
    Link,
    Links,
    Marked,
    Paragraph,
    Table,
    Value,
    Verdict,
    cut_note,
    safe_href,
    shown_rows,
)
from ragaudit.report.draw.cells import cell, strong, text
from ragaudit.verdict import LABELS, MARKS

LIMIT = 100
"""Rows of a list or table the page shows (the JSON report holds them all)."""
TONES = {"pass": "ok-line", "fail": "bad-line", "not_verified": "warn-line"}

PageSection = tuple[str, str, str]
"""``(anchor id, nav title, inner HTML)``: one section of the page."""


def draw_html(document: Document, limit: int = LIMIT) -> list[PageSection]:
    """The page sections of ``document`` (anchors and titles escaped, inner HTML built here)."""
    return [(esc(s.anchor), s.title, "".join(_block(b, limit) for b in s.blocks)) for s in document.sections]


def _cut(shown: int, total: int) -> str:
    return f'<p class="hint">{esc(cut_note(shown, total))}</p>' if shown < total else ""


BADGES = {"pass": "pass", "fail": "fail", "not_verified": "warn"}


def _link(text: str, href: str) -> str:
    target = safe_href(href)
    return f'<a href="{esc(target)}">{esc(text)}</a>' if target is not None else esc(text)


def _cell(value: Value, column: Column) -> str:
    """A cell: a link, a verdict badge (its reason as the tooltip), a significant value bold (coloured
    with its tone)."""
    if isinstance(value, Link):
        return _link(value.text, value.href)
    if isinstance(value, Badge):
        title = f' title="{esc(value.reason)}"' if value.reason else ""
        return f'<span class="badge small {BADGES[value.state]}"{title}>{esc(value.text)}</span>'
    shown = esc(cell(value, column))
    if isinstance(value, Marked) and value.tone in ("up", "down"):
        return f'<span class="{value.tone} sig">{shown}</span>'
    return f"<b>{shown}</b>" if strong(value) else shown


def _table(block: Table, limit: int) -> str:
    shown, total = shown_rows(block.rows, block.total, limit, block.cut)

    def cls(numeric: bool) -> str:
        return ' class="num"' if numeric else ""

    head = "".join(f"<th{cls(c.numeric)}>{esc(c.label)}</th>" for c in block.columns)
    body = "".join(
        ('<tr class="win">' if i == block.highlight else "<tr>")
        + "".join(
            f'<td{cls(c.numeric)} data-label="{esc(c.label)}">{_cell(v, c)}</td>'
            for v, c in zip(row, block.columns, strict=True)
        )
        + "</tr>"
        for i, row in enumerate(block.rows[:shown])
    )
    name = f" {esc(block.name)}" if block.name else ""
    return (  # stack rowcards: on a phone each row is a card and each cell names its column
        f'<div class="docwrap"><table class="stack rowcards{name}"><thead><tr>{head}</tr></thead><tbody>{body}</tbody>'
        "</table></div>" + _cut(shown, total)
    )


def _items(block: Items, limit: int) -> str:
    shown, total = shown_rows(block.items, block.total, limit)
    intro = f"<p>{esc(block.intro)}</p>" if block.intro else ""
    items = "".join(
        f"<li><code>{esc(lead)}</code>{esc(block.separator)}{esc(what)}</li>"
        for lead, what in block.items[:shown]
    )
    return f'{intro}<ul class="ids">{items}</ul>{_cut(shown, total)}'


def _charts(block: Block) -> str:
    assert isinstance(block, CHARTS), f"no HTML drawing for {type(block).__name__}"
    caption = f'<p class="hint">{esc(block.caption)}</p>' if block.caption else ""
    return _chart(block) + caption


def _chart(block: Block) -> str:
    if isinstance(block, DotPlot):
        series = [(name, list(values)) for name, values in block.series]
        intervals = {name: list(values) for name, values in block.intervals} or None
        return svg.dot_plot(list(block.categories), series, block.title, block.highlight, intervals)
    if isinstance(block, Forest):
        rows = [svg.Interval(i.label, i.value, i.low, i.high, i.highlight) for i in block.intervals]
        return svg.forest_plot(rows, block.title)
    if isinstance(block, Histogram):
        return svg.histogram(list(block.values), block.title, dict(block.markers), block.unit)
    assert isinstance(block, Lines), f"no HTML drawing for {type(block).__name__}"
    return svg.line_chart(list(block.x), [(n, list(v)) for n, v in block.series], block.title, block.x_name)


def _block(block: Block, limit: int) -> str:
    if isinstance(block, Heading):
        return f"<h3>{esc(block.text)}</h3>"
    if isinstance(block, Paragraph):
        return f'<p class="hint">{esc(block.text)}</p>' if block.hint else f"<p>{esc(block.text)}</p>"
    if isinstance(block, Lead):
        return f'<p class="advice">{esc(block.text)}</p>'
    if isinstance(block, Links):
        return (
            f'<p class="pages">{esc(block.intro)} ' + " · ".join(_link(t, h) for t, h in block.links) + "</p>"
        )
    if isinstance(block, Verdict):
        return (
            f'<p class="{TONES[block.state]}">{MARKS[block.state]} {esc(block.check)}: '
            f"{LABELS[block.state]}: {esc(block.reason)}</p>"
        )
    if isinstance(block, KeyValues):
        rows = "".join(
            f"<tr><th>{esc(label)}</th><td>{esc(text(value))}</td></tr>" for label, value in block.pairs
        )
        return f'<table class="kv">{rows}</table>'
    if isinstance(block, Table):
        return _table(block, limit)
    if isinstance(block, Items):
        return _items(block, limit)
    if isinstance(block, Details):
        inner = "".join(_block(b, limit) for b in block.blocks)
        return f"<details><summary>{esc(block.summary)}</summary>{inner}</details>"
    return _charts(block)
