"""The rank matrix every bulk kernel reads: judgments laid out by rank for a batch of queries.

* ``grades[q, i]``   grade of the item at rank ``i + 1`` (0 when unjudged, a duplicate or padding);
* ``relevant[q, i]`` binary relevance of that item (False for duplicates and padding);
* ``n_relevant[q]``  size of the binary relevant set (retrieved or not);
* ``ideal[q, j]``    the grades > 0 of all judged items, sorted descending, zero-padded;
* ``judged[q, i]``   whether that item has a grade in the judgments (any grade >= 0; False for
  duplicates, padding and unjudged items) — optional, for measures that count judgments;
* ``length[q]``      the ranking's length within the matrix (duplicates keep their slot) — optional;
* ``n_nonrelevant[q]`` judged items that are not relevant (retrieved or not; bpref's N) — optional.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass
from functools import cached_property

import numpy as np
import numpy.typing as npt

from ragaudit.metrics.pure import Gain

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True)
class RankMatrix:
    """Judgments laid out by rank for a batch of queries (see the module docstring)."""

    grades: npt.NDArray[np.float64]
    relevant: npt.NDArray[np.bool_]
    n_relevant: npt.NDArray[np.int64]
    ideal: npt.NDArray[np.float64]
    judged: npt.NDArray[np.bool_] | None = None
    length: npt.NDArray[np.int64] | None = None
    n_nonrelevant: npt.NDArray[np.int64] | None = None

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
    judged = np.zeros((n, width), dtype=np.bool_)
    length = np.fromiter((min(len(r), width) for r in rankings), dtype=np.int64, count=n)
    n_relevant = np.fromiter((len(s) for s in relevant_sets), dtype=np.int64, count=n)
    n_nonrelevant = np.fromiter(
        (
            sum(1 for d in rel if d not in rel_set)
            for rel, rel_set in zip(relevances, relevant_sets, strict=True)
        ),
        dtype=np.int64,
        count=n,
    )
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
            judged[q, i] = doc_id in rel
        ideal[q, : len(ideal_lists[q])] = ideal_lists[q]
    return RankMatrix(grades, relevant, n_relevant, ideal, judged, length, n_nonrelevant)


class Ranks:
    """A :class:`RankMatrix` with the cumulative hits that several kernels share, computed once."""

    def __init__(self, matrix: RankMatrix) -> None:
        self.matrix = matrix

    @cached_property
    def cum_hits(self) -> FloatArray:
        """``cum_hits[q, i]``: relevant items in the top ``i + 1``."""
        return np.cumsum(self.matrix.relevant, axis=1, dtype=np.float64)

    def cut(self, k: int | None) -> int:
        """How many columns a cut-off reads: ``k`` capped at the matrix depth (all of it for ``None``)."""
        return self.matrix.depth if k is None else min(k, self.matrix.depth)

    def hits(self, k: int | None) -> FloatArray:
        """Relevant items in the top ``k`` of each row."""
        cut = self.cut(k)
        return self.cum_hits[:, cut - 1] if cut > 0 else np.zeros(self.matrix.n_queries)


def gain_array(grades: FloatArray, gain: Gain) -> FloatArray:
    """``2^g - 1`` (exponential) or ``g`` (linear), elementwise."""
    if gain == "exponential":
        return np.exp2(grades) - 1.0
    if gain == "linear":
        return grades
    raise ValueError(f"unknown gain {gain!r}; use 'exponential' or 'linear'")


def discount(width: int) -> FloatArray:
    """``1 / log2(i + 1)`` for ranks ``i = 1..width``."""
    return 1.0 / np.log2(np.arange(2, width + 2, dtype=np.float64))


def safe_div(num: FloatArray, den: npt.NDArray[np.int64] | FloatArray) -> FloatArray:
    """``num / den``, ``nan`` where ``den`` is 0 (a metric undefined there)."""
    den_f = np.asarray(den, dtype=np.float64)
    out = np.full(num.shape, np.nan)
    np.divide(num, den_f, out=out, where=den_f > 0)
    return out
