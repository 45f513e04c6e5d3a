"""Vectorised metric engine: the same metrics as :mod:`ragaudit.metrics.pure` for many queries at once.

Input is a :class:`RankMatrix`, one row per query and one column per rank:

* ``grades[q, i]``   grade of the item at rank ``i + 1`` (0 when unjudged, a duplicate or padding);
* ``relevant[q, i]`` binary relevance of that item (False for duplicates and padding);
* ``n_relevant[q]``  size of the binary relevant set (retrieved or not);
* ``ideal[q, j]``    the grades > 0 of all judged items, sorted descending, zero-padded.

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
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragaudit.metrics.names import MetricSpec
from ragaudit.metrics.pure import Gain

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class RankMatrix:
    """Judgments laid out by rank for a batch of queries (see the module docstring)."""

    grades: npt.NDArray[np.float64]
    relevant: npt.NDArray[np.bool_]
    n_relevant: npt.NDArray[np.int64]
    ideal: npt.NDArray[np.float64]

    def __post_init__(self) -> None:
        n = self.grades.shape[0]
        if (
            self.relevant.shape != self.grades.shape
            or self.n_relevant.shape != (n,)
            or self.ideal.shape[0] != n
        ):
            raise ValueError("RankMatrix arrays disagree on their shapes")
        if self.grades.size and float(self.grades.min()) < 0:
            raise ValueError("Relevance grades cannot be negative; use 0 for judged non-relevant")

    @property
    def n_queries(self) -> int:
        return int(self.grades.shape[0])

    @property
    def depth(self) -> int:
        return int(self.grades.shape[1])


def build_rank_matrix(
    rankings: Sequence[Sequence[str]],
    relevant_sets: Sequence[Set[str]],
    relevances: Sequence[Mapping[str, int]],
    depth: int | None = None,
    ideal_depth: int | None = None,
) -> RankMatrix:
    """Lay out ranked id lists and their judgments as a :class:`RankMatrix`.

    ``depth`` cuts every ranking (default: the longest ranking); ``ideal_depth`` cuts the ideal
    grades (default: all of them; only safe when no metric reads deeper). Duplicates keep their slot
    with grade 0 and no relevance, as in the pure functions.
    """
    n = len(rankings)
    if not (len(relevant_sets) == len(relevances) == n):
        raise ValueError("rankings, relevant_sets and relevances must have one entry per query")
    width = depth if depth is not None else max((len(r) for r in rankings), default=0)
    grades = np.zeros((n, width), dtype=np.float64)
    relevant = np.zeros((n, width), dtype=np.bool_)
    n_relevant = np.fromiter((len(s) for s in relevant_sets), dtype=np.int64, count=n)
    ideal_lists = [
        sorted((g for g in rel.values() if g > 0), reverse=True)[:ideal_depth] for rel in relevances
    ]
    ideal = np.zeros((n, max((len(x) for x in ideal_lists), default=0)), dtype=np.float64)
    for q, (ranking, rel_set, rel) in enumerate(zip(rankings, relevant_sets, relevances, strict=True)):
        seen: set[str] = set()
        for i, doc_id in enumerate(ranking[:width]):
            if doc_id in seen:
                continue
            seen.add(doc_id)
            grades[q, i] = rel.get(doc_id, 0)
            relevant[q, i] = doc_id in rel_set
        ideal[q, : len(ideal_lists[q])] = ideal_lists[q]
    return RankMatrix(grades, relevant, n_relevant, ideal)


def _gain(grades: FloatArray, gain: Gain) -> FloatArray:
    if gain == "exponential":
        return np.exp2(grades) - 1.0
    if gain == "linear":
        return grades
    raise ValueError(f"unknown gain {gain!r}; use 'exponential' or 'linear'")


def _discount(width: int) -> FloatArray:
    return 1.0 / np.log2(np.arange(2, width + 2, dtype=np.float64))


def _safe_div(num: FloatArray, den: npt.NDArray[np.int64] | FloatArray) -> FloatArray:
    den_f = np.asarray(den, dtype=np.float64)
    out = np.full(num.shape, np.nan)
    np.divide(num, den_f, out=out, where=den_f > 0)
    return out


def compute(
    matrix: RankMatrix, specs: Iterable[MetricSpec], gain: Gain = "exponential"
) -> dict[str, FloatArray]:
    """Compute every metric in ``specs`` for every query; returns ``{name: per-query values}``."""
    rel = matrix.relevant
    depth = matrix.depth
    cum_hits = np.cumsum(rel, axis=1, dtype=np.float64)
    n_rel = matrix.n_relevant
    out: dict[str, FloatArray] = {}
    for spec in specs:
        k = spec.k
        cut = depth if k is None else min(k, depth)
        hits = cum_hits[:, cut - 1] if cut > 0 else np.zeros(matrix.n_queries)
        if spec.family == "R":
            values = _safe_div(hits, n_rel)
        elif spec.family == "P":
            values = hits / float(k if k is not None else max(depth, 1))
        elif spec.family == "Hit":
            values = (hits > 0).astype(np.float64)
        elif spec.family == "MRR":
            window = rel[:, :cut]
            if cut == 0:
                values = np.zeros(matrix.n_queries)
            else:
                first = window.argmax(axis=1)
                values = np.where(window.any(axis=1), 1.0 / (first + 1.0), 0.0)
        elif spec.family == "MAP":
            ranks = np.arange(1, cut + 1, dtype=np.float64)
            precision_at_hits = np.where(rel[:, :cut], cum_hits[:, :cut] / ranks, 0.0)
            values = _safe_div(precision_at_hits.sum(axis=1), n_rel)
        elif spec.family == "RPrec":
            if depth == 0:
                values = _safe_div(np.zeros(matrix.n_queries), n_rel)
            else:
                at = np.clip(n_rel, 1, depth) - 1
                hits_at_r = cum_hits[np.arange(matrix.n_queries), at]
                values = _safe_div(hits_at_r, n_rel)
        elif spec.family == "nDCG":
            disc = _discount(cut)
            dcg = (_gain(matrix.grades[:, :cut], gain) * disc).sum(axis=1)
            icut = matrix.ideal.shape[1] if k is None else min(k, matrix.ideal.shape[1])
            idcg = (_gain(matrix.ideal[:, :icut], gain) * _discount(icut)).sum(axis=1)
            values = np.zeros(matrix.n_queries)
            np.divide(dcg, idcg, out=values, where=idcg > 0)
        else:  # pragma: no cover - names.py admits no other family
            raise ValueError(f"no bulk kernel for {spec.family}")
        out[spec.name] = values
    return out


def width_groups(widths: npt.NDArray[np.int64]) -> Iterator[tuple[npt.NDArray[np.int64], int]]:
    """Rows grouped by the next power of two of their width, with each group's widest row.

    A matrix per group holds at most twice the cells its rows need, so a few long rows never
    widen the short ones (memory proportional to the sum of the widths, not rows × the widest).
    """
    bucket = np.ceil(np.log2(np.maximum(widths, 1))).astype(np.int64)
    for b in np.unique(bucket).tolist():
        rows = np.flatnonzero(bucket == b)
        yield rows, max(int(widths[rows].max(initial=1)), 1)


def _needed_depth(specs: Sequence[MetricSpec]) -> int | None:
    """The deepest rank any metric reads: the largest cut-off, or ``None`` (whole ranking) if one has none."""
    cutoffs = [s.k for s in specs]
    return None if any(k is None for k in cutoffs) else max((k for k in cutoffs if k is not None), default=1)


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
