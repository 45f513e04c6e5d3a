"""A report's content without its format: what a kind says, which the back-ends draw.

A kind builds one :class:`Document` from its typed view (``ReportKind.document``): its findings first,
then the figures behind them. The three back-ends in :mod:`ragaudit.report.draw` (terminal, Markdown,
HTML) draw any document; they never import a kind, and a kind never imports them. Every value here is
plain data (text is never pre-escaped: escaping is the back-ends' job, so a kind, built-in or
third-party, cannot put raw HTML or Markdown on a page).

Blocks:

* :class:`Heading`, :class:`Paragraph` (``hint`` for an explanation in smaller type), :class:`Lead`
  (a section's finding in one line), :class:`Links` (to the report's other pages);
* :class:`Verdict`: a three-state banner (pass / fail / not verified, with its reason);
* :class:`KeyValues`: ``label value`` pairs (settings, a short summary);
* :class:`Table`: columns with a :data:`ColumnType` (one formatter per type, the same in every
  back-end: :mod:`ragaudit.report.draw.cells`);
* :class:`Items`: a list of ``(lead, text)`` lines (a case id and what is wrong with it);
* :class:`Details`: blocks behind a summary (collapsed on a page);
* charts, drawn on the HTML page only (their figures are in a table beside them): :class:`DotPlot`
  (one axis per category), :class:`Forest` (points with intervals around zero), :class:`Histogram`,
  :class:`Lines`.

A long :class:`Table` or :class:`Items` is cut by the back-end (the terminal at its ``limit``,
Markdown at :data:`ragaudit.report.draw.markdown.LIMIT`, HTML at :data:`ragaudit.report.draw.html.LIMIT`)
with the note :func:`cut_note`: ``first 10 of 42 shown; all 42 are in the JSON report``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, TypeAlias

from ragaudit.verdict import VerdictState

ColumnType = Literal["text", "id", "number", "count", "signed", "p_value", "percent", "interval"]
"""How a column's values read: ``text`` and ``id`` as written (an id is never cut), ``number`` to
``digits`` decimals, ``count`` an integer, ``signed`` with its sign, ``p_value`` as ``0.042`` or
``< 0.001``, ``percent`` as ``12.5%`` of a share in 0..1, ``interval`` a :class:`Span` as
``[-0.0120, +0.0850]``. A missing value (None, NaN, text in a number
column) reads :data:`ragaudit.report.draw.cells.MISSING` in every format."""


@dataclass(frozen=True)
class Marked:
    """A cell's value with a mark after it (``0.8123*``: significant, ``hybrid (best)``); ``strong``
    draws it bold on a page and in Markdown."""

    value: str | int | float | None
    mark: str = ""
    strong: bool = False
    tone: str = ""
    """``up`` or ``down``: a significant gain or loss, coloured on a page."""


@dataclass(frozen=True)
class Link:
    """A cell's text that links to another page of the same report folder (``bm25.html``); drawn as text
    outside a page. Only a relative link is drawn as one (see :func:`safe_href`)."""

    text: str
    href: str


@dataclass(frozen=True)
class Badge:
    """A verdict in a cell (``✓ verified``, ``✗ leaks (3)``, ``? not verified``) with its reason (a
    tooltip on a page); only ``pass`` may carry a check mark."""

    state: VerdictState
    text: str
    reason: str = ""


@dataclass(frozen=True)
class Span:
    """A confidence interval (an ``interval`` cell)."""

    low: float | None
    high: float | None


Value: TypeAlias = "str | int | float | Marked | Span | Link | Badge | None"


@dataclass(frozen=True)
class Heading:
    text: str


@dataclass(frozen=True)
class Paragraph:
    text: str
    hint: bool = False
    """An explanation of the figures for a page (smaller, muted; the terminal leaves it out)."""


@dataclass(frozen=True)
class Lead:
    """A section's finding in one line (a benchmark's recommendation): ``label: text`` in a terminal,
    bold in Markdown, large on a page."""

    label: str
    text: str


@dataclass(frozen=True)
class Links:
    """``intro`` then links to the report's other pages (``(text, href)``); text outside a page."""

    intro: str
    links: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Verdict:
    """``tenant isolation: NOT VERIFIED - why``: only ``pass`` gets a check mark."""

    check: str
    state: VerdictState
    reason: str


@dataclass(frozen=True)
class KeyValues:
    pairs: tuple[tuple[str, Value], ...]


@dataclass(frozen=True)
class Column:
    label: str
    type: ColumnType = "text"
    digits: int = 4
    """Decimals of a ``number`` or ``signed`` column."""

    @property
    def numeric(self) -> bool:
        return self.type not in ("text", "id")


@dataclass(frozen=True)
class Table:
    columns: tuple[Column, ...]
    rows: tuple[tuple[Value, ...], ...]
    total: int | None = None
    """How many rows there are when ``rows`` holds only some (None: ``len(rows)``)."""
    cut: bool = True
    """False for a table of figures, which no back-end cuts (a list of cases is cut: :func:`cut_note`)."""
    name: str = ""
    """What the table is (``ranking``): a class on a page."""
    highlight: int | None = None
    """The row drawn highlighted on a page (the winner's)."""


@dataclass(frozen=True)
class Items:
    """``intro`` then one line per ``(lead, text)`` item (``lead`` is an id, drawn as code on a page)."""

    intro: str
    items: tuple[tuple[str, str], ...]
    separator: str = ": "
    total: int | None = None
    under: tuple[tuple[str, ...], ...] = ()
    """Lines under each item (a gate's findings and notes), aligned with ``items`` (missing: none); the
    terminal prints them as written, Markdown and HTML as a nested list (without a leading ``- ``)."""


@dataclass(frozen=True)
class DotPlot:
    """Each series' value per category, every category on an axis of its own (``highlight`` ringed)."""

    title: str
    categories: tuple[str, ...]
    series: tuple[tuple[str, tuple[float | None, ...]], ...]
    highlight: str | None = None
    intervals: tuple[tuple[str, tuple[tuple[float, float] | None, ...]], ...] = ()
    """Each series' interval per category (a 95% CI of a mean), drawn as whiskers."""
    caption: str = ""
    """What the chart shows and how to read it: drawn with the chart (a hint below it on a page), so it
    goes where the chart goes (Markdown and the terminal draw no chart, and print no caption)."""


@dataclass(frozen=True)
class Interval:
    label: str
    value: float | None
    low: float | None
    high: float | None
    highlight: bool = False


@dataclass(frozen=True)
class Forest:
    """Points with their intervals around zero (paired deltas and their CIs)."""

    title: str
    intervals: tuple[Interval, ...]
    caption: str = ""
    """What the chart shows and how to read it: drawn with the chart (a hint below it on a page), so it
    goes where the chart goes (Markdown and the terminal draw no chart, and print no caption)."""


@dataclass(frozen=True)
class Histogram:
    title: str
    values: tuple[float, ...]
    markers: tuple[tuple[str, float], ...] = ()
    unit: str = "ms"
    caption: str = ""
    """What the chart shows and how to read it: drawn with the chart (a hint below it on a page), so it
    goes where the chart goes (Markdown and the terminal draw no chart, and print no caption)."""


@dataclass(frozen=True)
class Lines:
    """One line per series over the x labels (metrics by k)."""

    title: str
    x_name: str
    x: tuple[str, ...]
    series: tuple[tuple[str, tuple[float | None, ...]], ...]
    caption: str = ""
    """What the chart shows and how to read it: drawn with the chart (a hint below it on a page), so it
    goes where the chart goes (Markdown and the terminal draw no chart, and print no caption)."""


@dataclass(frozen=True)
class Details:
    """Blocks behind a summary: collapsed on a page, ``summary:`` and the blocks in a terminal."""

    summary: str
    blocks: tuple[Block, ...]


Chart: TypeAlias = "DotPlot | Forest | Histogram | Lines"
Block: TypeAlias = (
    "Heading | Paragraph | Lead | Links | Verdict | KeyValues | Table | Items | Details | Chart"
)
CHARTS = (DotPlot, Forest, Histogram, Lines)


OUTCOME = "outcome"
"""The anchor of a run's outcome (``run: FAIL - ...``): a page draws it first, above the summary."""

PROBLEMS = "problems"
"""The anchor of the "Missing & errors" part: a kind's document with a section of this anchor lists the
missing cases and errors itself, and no page back-end lists them again."""


@dataclass(frozen=True)
class Section:
    """A titled part of a document (a page section with its anchor; the terminal prints no titles)."""

    anchor: str
    title: str
    blocks: tuple[Block, ...]


@dataclass(frozen=True)
class Document:
    sections: tuple[Section, ...] = field(default_factory=tuple)

    def blocks(self) -> list[Block]:
        """Every block, nested ones (inside :class:`Details`) included, in order."""
        out: list[Block] = []

        def walk(blocks: Sequence[Block]) -> None:
            for block in blocks:
                out.append(block)
                if isinstance(block, Details):
                    walk(block.blocks)

        for section in self.sections:
            walk(section.blocks)
        return out


def cut_note(shown: int, total: int) -> str:
    """What a cut list says (every back-end): ``first 10 of 42 shown; all 42 are in the JSON report``."""
    return f"first {shown} of {total} shown; all {total} are in the JSON report"


def shown_rows(
    rows: Sequence[object], total: int | None, limit: int | None, cut: bool = True
) -> tuple[int, int]:
    """``(rows to draw, rows there are)`` of a list cut at ``limit`` (not cut: ``cut`` False or no limit)."""
    if not cut:
        limit = None
    there = len(rows) if total is None else max(total, len(rows))
    return (len(rows) if limit is None else min(len(rows), limit)), there


def safe_href(href: str) -> str | None:
    """``href`` when it is a relative link to a file beside the page (``bm25.html``, ``runs/a.html#x``),
    else None (a scheme such as ``javascript:``, an absolute or a protocol-relative URL)."""
    if not href or ":" in href.split("#", 1)[0].split("/", 1)[0] or href.startswith(("/", "\\")):
        return None
    return href
