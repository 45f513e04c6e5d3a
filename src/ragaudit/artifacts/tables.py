"""Plain-text tables for the terminal (no dependency, aligned, numbers right-justified), and the cells
of a paired comparison every table shows the same way. Ground floor: experiments, context and the
renderers all print through these."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["delta_cells", "delta_ci_label", "fmt_number", "fmt_p", "render_table"]

P_FLOOR = 0.001
"""p-values under this are written ``p < 0.001``: a randomization test's p is never exactly 0, and
more digits than its resamples support would be false precision."""


def fmt_number(value: float | int | None, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    return "nan" if math.isnan(value) else f"{value:.{digits}f}"


def fmt_p(p: float | None, *, prefix: bool = True) -> str:
    """A p-value, written one way everywhere: ``p < 0.001`` under 0.001, else ``p = 0.012`` (three
    decimals), ``p –`` when undefined. ``prefix=False`` gives a table cell under a ``p`` header:
    ``< 0.001``, ``0.012`` or ``–``."""
    if p is None or isinstance(p, bool) or not math.isfinite(p):
        return "p –" if prefix else "–"
    if p < P_FLOOR:
        return f"p < {P_FLOOR:g}" if prefix else f"< {P_FLOOR:g}"
    return f"p = {p:.3f}" if prefix else f"{p:.3f}"


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1) -> str:
    """An aligned table: the first ``left`` columns left-justified (labels), the others right (numbers)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i < left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def delta_ci_label(rows: Iterable[Mapping[str, Any]], short: bool = False) -> str:
    """The header of a delta's CI column, saying how the CI was made: ``98.75% CI (Bonferroni)`` when it
    is adjusted for the family of Holm-corrected comparisons (level ``1 - alpha/m``, in the rows'
    ``ci_level``), ``95% CI (unadjusted)`` for comparisons made before CIs were adjusted. With
    ``short`` the words ``of Δ`` are left out."""
    levels = sorted(
        {float(r["ci_level"]) for r in rows if isinstance(r.get("ci_level"), (int, float))}, reverse=True
    )
    what = "CI" if short else "CI of Δ"
    if not levels:
        return f"95% {what} (unadjusted)"
    shown = "/".join(f"{100 * level:.4g}%" for level in levels)
    adjusted = any(level > 0.95 + 1e-9 for level in levels)
    return f"{shown} {what} (Bonferroni 1-α/m)" if adjusted else f"{shown} {what}"


def delta_cells(comparison: Mapping[str, Any]) -> list[str]:
    """The delta (``*`` when significant), its CI (at the level :func:`delta_ci_label` names), the
    Holm-corrected p-value and W/T/L of one paired comparison, as table cells (the shape of
    :func:`ragaudit.evaluation.compare.compare_reports` rows)."""
    c = comparison
    low, high = c["ci"]
    return [
        f"{c['delta']:+.4f}{'*' if c['significant'] else ''}",
        f"[{low:+.4f}, {high:+.4f}]",
        fmt_p(c["p_value_corrected"], prefix=False),
        f"{c['wins']}/{c['ties']}/{c['losses']}",
    ]
