"""Small HTML building blocks of the page's own sections (the summary cards, the sweeps, the problems;
cells are escaped by the caller)."""

from __future__ import annotations

from collections.abc import Sequence

from ragaudit.artifacts.escape import escape_html as esc

Section = tuple[str, str, str]
"""``(anchor id, nav title, inner HTML)``."""


def html_table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 1) -> str:
    """A table of already-escaped cells (headers: escaped text); columns from ``numeric_from`` on are
    right-aligned numbers. On a phone its rows become cards, each cell labelled with its column."""

    def cls(i: int) -> str:
        return ' class="num"' if i >= numeric_from else ""

    head = "".join(f"<th{cls(i)}>{h}</th>" for i, h in enumerate(headers))
    body = "".join(
        "<tr>"
        + "".join(
            f'<td{cls(i)} data-label="{h}">{c}</td>' for i, (h, c) in enumerate(zip(headers, r, strict=True))
        )
        + "</tr>"
        for r in rows
    )
    return f'<table class="stack rowcards"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def card(label: str, value: str, tone: str = "") -> str:
    return (
        f'<div class="card {tone}"><div class="k">{esc(label)}</div><div class="v">{esc(value)}</div></div>'
    )
