"""Small HTML building blocks shared by the report's sections (cells are escaped by the caller)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragaudit.artifacts.escape import escape_html as esc
from ragaudit.artifacts.tables import delta_ci_label
from ragaudit.report.sections import ci_bounds, ci_text, wtl_text
from ragaudit.report.sections import num as _num
from ragaudit.report.sections import signed as _signed
from ragaudit.report.svg import Interval, forest_plot

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


def delta_html(c: Mapping[str, Any] | None) -> str:
    """A paired delta, coloured and bold when significant."""
    if c is None:
        return "–"
    if not c.get("significant"):
        return _signed(c.get("delta"))
    delta = c.get("delta")
    tone = "up" if isinstance(delta, (int, float)) and delta > 0 else "down"
    return f'<span class="{tone} sig">{_signed(c.get("delta"))}</span>'


def interval(label: str, c: Mapping[str, Any]) -> Interval:
    lo, hi = ci_bounds(c)
    return Interval(label, c.get("delta"), lo, hi, bool(c.get("significant")))


def comparison_table(rows: Sequence[Mapping[str, Any]], with_system: bool) -> str:
    out = []
    for c in rows:
        cells = [esc(c["metric"])]
        if with_system:
            cells.append(esc(c["system"]))
        cells += [
            _num(c.get("baseline_mean")),
            _num(c.get("system_mean")),
            delta_html(c),
            ci_text(c),
            _num(c.get("p_value_corrected"), 3),
            "yes" if c.get("significant") else "no",
            esc(wtl_text(c)),
        ]
        out.append(cells)
    headers = [
        "metric",
        *(["system"] if with_system else []),
        "baseline",
        "system",
        "Δ",
        esc(delta_ci_label(rows)),
    ]
    return html_table([*headers, "p (Holm)", "significant", "W/T/L"], out, 2 if with_system else 1)


def forest(rows: Sequence[Mapping[str, Any]], with_system: bool) -> str:
    intervals = [
        interval(f"{c['system']} · {c['metric']}" if with_system else str(c["metric"]), c) for c in rows
    ]
    return forest_plot(intervals, "paired deltas against the baseline with confidence intervals")
