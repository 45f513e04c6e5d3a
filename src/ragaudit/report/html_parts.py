"""Small HTML building blocks shared by the report's sections (cells are escaped by the caller)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ragaudit.artifacts.escape import escape_html as esc
from ragaudit.artifacts.tables import delta_ci_label, fmt_p
from ragaudit.report.sections import ci_text, wtl_text
from ragaudit.report.sections import num as _num
from ragaudit.report.sections import signed as _signed
from ragaudit.report.svg import Interval, forest_plot

if TYPE_CHECKING:
    from ragaudit.report.kinds.fields import Paired

Section = tuple[str, str, str]
"""``(anchor id, nav title, inner HTML)``."""


def html_table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric_from: int = 1) -> str:
    """A table of already-escaped cells; columns from ``numeric_from`` on are right-aligned numbers."""

    def cls(i: int) -> str:
        return ' class="num"' if i >= numeric_from else ""

    head = "".join(f"<th{cls(i)}>{h}</th>" for i, h in enumerate(headers))
    body = "".join("<tr>" + "".join(f"<td{cls(i)}>{c}</td>" for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def card(label: str, value: str, tone: str = "") -> str:
    return (
        f'<div class="card {tone}"><div class="k">{esc(label)}</div><div class="v">{esc(value)}</div></div>'
    )


def delta_html(c: Paired | None) -> str:
    """A paired delta, coloured and bold when significant."""
    if c is None:
        return "–"
    if not c.significant:
        return _signed(c.delta)
    tone = "up" if c.delta is not None and c.delta > 0 else "down"
    return f'<span class="{tone} sig">{_signed(c.delta)}</span>'


def interval(label: str, c: Paired) -> Interval:
    lo, hi = c.ci if c.ci is not None else (None, None)
    return Interval(label, c.delta, lo, hi, c.significant)


def comparison_table(rows: Sequence[Paired], with_system: bool) -> str:
    out = []
    for c in rows:
        cells = [esc(c.metric)]
        if with_system:
            cells.append(esc(c.system))
        cells += [
            _num(c.baseline_mean),
            _num(c.system_mean),
            delta_html(c),
            ci_text(c),
            esc(fmt_p(c.p_value_corrected, prefix=False)),
            "yes" if c.significant else "no",
            esc(wtl_text(c)),
        ]
        out.append(cells)
    headers = [
        "metric",
        *(["system"] if with_system else []),
        "baseline",
        "system",
        "Δ",
        esc(delta_ci_label([c.data for c in rows])),
    ]
    return html_table([*headers, "p (Holm)", "significant", "W/T/L"], out, 2 if with_system else 1)


def forest(rows: Sequence[Paired], with_system: bool) -> str:
    intervals = [interval(f"{c.system} · {c.metric}" if with_system else c.metric, c) for c in rows]
    return forest_plot(intervals, "paired deltas against the baseline with confidence intervals")
