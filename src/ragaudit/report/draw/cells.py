"""One formatter per column type, shared by the three back-ends: a missing value, a p-value and a
percentage read the same in the terminal, in Markdown and in HTML (plain text; the back-ends escape)."""

from __future__ import annotations

import math

from ragaudit.artifacts.tables import P_FLOOR, fmt_p
from ragaudit.report.document import Column, Marked, Span, Value

MISSING = "–"
"""A value that is not there (None, NaN, text in a number column), in every format."""
SMALLEST_P = P_FLOOR
"""p-values below this read ``< 0.001`` (:func:`ragaudit.artifacts.tables.fmt_p`, the one p formatter)."""


def _number(value: Value) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def cell(value: Value, column: Column) -> str:
    """``value`` as ``column``'s type reads it (a :class:`Marked` value with its mark; the back-ends
    make a strong one bold)."""
    if isinstance(value, Marked):
        return cell(value.value, column) + value.mark
    if isinstance(value, Span):
        low, high = _number(value.low), _number(value.high)
        if low is None or high is None:
            return MISSING
        return f"[{low:+.{column.digits}f}, {high:+.{column.digits}f}]"
    if column.type in ("text", "id"):
        return MISSING if value is None or value == "" else str(value)
    number = _number(value)
    if number is None:
        return MISSING
    if column.type == "count" or (column.type == "number" and isinstance(value, int)):
        return f"{int(number):,}"
    if column.type == "signed":
        return f"{number:+.{column.digits}f}"
    if column.type == "p_value":
        return p_value(number)
    if column.type == "percent":
        return f"{number:.1%}"
    return f"{number:.{column.digits}f}"


def p_value(value: float | None) -> str:
    """``0.042``, ``< 0.001`` (below :data:`SMALLEST_P`), or :data:`MISSING`: the cell form of
    :func:`ragaudit.artifacts.tables.fmt_p`."""
    return fmt_p(_number(value), prefix=False)


def text(value: Value) -> str:
    """A key-value's value: a number as a ``number`` column reads it, text as written."""
    if isinstance(value, (Marked, Span)):
        return cell(value, Column("", "interval" if isinstance(value, Span) else "number"))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return cell(value, Column("", "number"))
    return MISSING if value is None else str(value)


def strong(value: Value) -> bool:
    """Whether a cell is drawn bold (a :class:`Marked` value that says so)."""
    return isinstance(value, Marked) and value.strong
