"""RPrec: R-precision, ``|top_R ∩ Rel| / R`` with ``R = |Rel|`` (see :func:`~ragaudit.metrics.pure.r_precision`)."""

from __future__ import annotations

import numpy as np

from ragaudit.metrics.matrix import FloatArray, Ranks, safe_div
from ragaudit.metrics.measure import KnownAnswer, Measure, TrecName, level
from ragaudit.metrics.pure import Gain, r_precision


def kernel(ranks: Ranks, k: int | None, gain: Gain) -> FloatArray:
    """Hits in the top R over R (``nan`` when R is 0)."""
    matrix = ranks.matrix
    if matrix.depth == 0:
        return safe_div(np.zeros(matrix.n_queries), matrix.n_relevant)
    at = np.clip(matrix.n_relevant, 1, matrix.depth) - 1
    return safe_div(ranks.cum_hits[np.arange(matrix.n_queries), at], matrix.n_relevant)


MEASURE = Measure(
    family="RPrec",
    meaning="R-precision",
    order=70,
    cutoff="none",
    examples=("RPrec",),
    aliases=("r-prec", "r_prec", "r-precision"),
    pure=lambda ranking, grades, relevant, k, gain: r_precision(ranking, relevant),
    kernel=kernel,
    needs_relevant=True,
    trec_eval=TrecName(whole="Rprec"),
    ranx=lambda k, threshold, gain: f"r-precision{level(threshold)}",
    known_answers=(
        KnownAnswer(
            "R-precision", "RPrec", ("A", "X", "B"), dict.fromkeys("AB", 1), 0.5, "1 hit in the top R = 2"
        ),
    ),
)
