"""Vectorised metric engine: the same metrics as :mod:`ragaudit.metrics.pure` for many queries at once.

Input is a :class:`~ragaudit.metrics.matrix.RankMatrix`, one row per query and one column per rank.

Every metric is a handful of array operations over the whole matrix; there is no per-query Python
loop. :func:`compute_rankings` scores ranked id lists in memory proportional to their total length,
never queries × longest ranking: rows are grouped by width (the next power of two of each row's
ranking and ideal lengths, capped at the largest cut-off when every metric has one) and each group is
one matrix, so a single long ranking does not widen the others. Zero padding changes no metric, so
the numbers are those of one big matrix. Rows with ``n_relevant == 0`` (unanswerable) get ``nan`` for the metrics that are undefined
there (R, MAP, RPrec) and the natural value for the others; the evaluator keeps them out of averages.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence, Set

import numpy as np
import numpy.typing as npt

from ragaudit.metrics.matrix import FloatArray, RankMatrix, Ranks, build_rank_matrix
from ragaudit.metrics.measures import measure_of
from ragaudit.metrics.names import MetricSpec
from ragaudit.metrics.pure import Gain

__all__ = ["FloatArray", "RankMatrix", "build_rank_matrix", "compute", "compute_rankings", "width_groups"]


def compute(
    matrix: RankMatrix, specs: Iterable[MetricSpec], gain: Gain = "exponential"
) -> dict[str, FloatArray]:
    """Compute every metric in ``specs`` for every query; returns ``{name: per-query values}``.

    Each family's kernel is its measure's (:mod:`ragaudit.metrics.measures`).
    """
    ranks = Ranks(matrix)
    return {spec.name: measure_of(spec.family).kernel(ranks, spec.k, gain) for spec in specs}


def width_groups(widths: npt.NDArray[np.int64]) -> Iterator[tuple[npt.NDArray[np.int64], int]]:
    """Rows grouped by the next power of two of their width, with each group's widest row.

    A matrix per group holds at most twice the cells its rows need, so a few long rows never
    widen the short ones (memory proportional to the sum of the widths, not rows × the widest).
    """
    bucket = np.ceil(np.log2(np.maximum(widths, 1))).astype(np.int64)
    for b in np.flatnonzero(np.bincount(bucket)).tolist():
        rows = np.flatnonzero(bucket == b)
        yield rows, max(int(widths[rows].max(initial=1)), 1)


def _needed_depth(specs: Sequence[MetricSpec]) -> int | None:
    """The deepest rank any metric reads: the largest cut-off, or ``None`` (whole ranking) if one has
    none or reads past it (a condensed-list measure such as ``nDCG'@k``)."""
    cutoffs = [s.k for s in specs]
    if any(k is None or measure_of(s.family).reads_past_cutoff for s, k in zip(specs, cutoffs, strict=True)):
        return None
    return max((k for k in cutoffs if k is not None), default=1)


def compute_rankings(
    rankings: Sequence[Sequence[str]],
    relevant_sets: Sequence[Set[str]],
    relevances: Sequence[Mapping[str, int]],
    specs: Iterable[MetricSpec],
    gain: Gain = "exponential",
) -> dict[str, FloatArray]:
    """:func:`compute` of :func:`build_rank_matrix`, in memory proportional to the input (see the module doc)."""
    specs = tuple(specs)
    n = len(rankings)
    if not (len(relevant_sets) == len(relevances) == n):
        raise ValueError("rankings, relevant_sets and relevances must have one entry per query")
    cap = _needed_depth(specs)
    widths = np.fromiter(
        (
            max(len(ranking), sum(1 for g in rel.values() if g > 0), 1)
            for ranking, rel in zip(rankings, relevances, strict=True)
        ),
        dtype=np.int64,
        count=n,
    )
    if cap is not None:
        np.minimum(widths, cap, out=widths)
    out = {spec.name: np.zeros(n, dtype=np.float64) for spec in specs}
    for rows, depth in width_groups(widths):
        matrix = build_rank_matrix(
            [rankings[i] for i in rows],
            [relevant_sets[i] for i in rows],
            [relevances[i] for i in rows],
            depth,
            cap,
        )
        for name, values in compute(matrix, specs, gain).items():
            out[name][rows] = values
    return out
