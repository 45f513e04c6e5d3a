"""The cells and the forest plot of paired comparisons, the same in every kind that builds a document:
the delta (``*`` and bold when significant), its CI, the Holm-corrected p and wins/ties/losses."""

from __future__ import annotations

from collections.abc import Sequence

from ragaudit.artifacts.tables import delta_ci_label
from ragaudit.report.document import Column, Forest, Interval, Marked, Span, Table, Value
from ragaudit.report.kinds.fields import Paired


def delta_columns(
    rows: Sequence[Paired | None], delta: str = "delta", short: bool = True
) -> tuple[Column, ...]:
    """``delta``, the CI (its level: :func:`ragaudit.artifacts.tables.delta_ci_label`), p (Holm), W/T/L."""
    ci = delta_ci_label([c.data for c in rows if c is not None], short=short)
    return Column(delta, "signed"), Column(ci, "interval"), Column("p (Holm)", "p_value"), Column("W/T/L")


def delta_values(c: Paired | None) -> tuple[Value, ...]:
    """The four cells of :func:`delta_columns` for one comparison (missing ones for None)."""
    if c is None:
        return None, None, None, None
    low, high = c.ci if c.ci is not None else (None, None)
    delta = Marked(c.delta, "*", strong=True) if c.significant else c.delta
    counts = (c.wins, c.ties, c.losses)
    wtl = None if None in counts else "/".join(map(str, counts))
    return delta, Span(low, high), c.p_value_corrected, wtl


FOREST_CAPTION = "Blue points are significant (the dashed line is no difference)."


def forest(title: str, rows: Sequence[tuple[str, Paired]], caption: str = FOREST_CAPTION) -> Forest:
    """Each comparison's delta and CI around zero (significant ones highlighted)."""
    intervals = []
    for label, c in rows:
        low, high = c.ci if c.ci is not None else (None, None)
        intervals.append(Interval(label, c.delta, low, high, c.significant))
    return Forest(title, tuple(intervals), caption)


def comparison_table(rows: Sequence[Paired]) -> Table:
    """One row per system and metric: both means, the delta (``*`` significant), its CI, p, W/T/L."""
    return Table(
        (Column("metric"), Column("system"), Column("baseline", "number"), Column("system", "number"),
         *delta_columns(rows, "delta", short=False)),
        tuple((c.metric, c.system, c.baseline_mean, c.system_mean, *delta_values(c)) for c in rows),
        cut=False,
    )  # fmt: skip
