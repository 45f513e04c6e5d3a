"""MRR: mean reciprocal rank, ``RR@k = 1 / rank of the first relevant item`` (see :func:`~ragaudit.metrics.pure.reciprocal_rank`)."""

from __future__ import annotations

import numpy as np

from ragaudit.metrics.matrix import FloatArray, Ranks
from ragaudit.metrics.measure import KnownAnswer, Measure, TrecName, level
from ragaudit.metrics.pure import Gain, reciprocal_rank


def kernel(ranks: Ranks, k: int | None, gain: Gain) -> FloatArray:
    """``1 / (first relevant column + 1)`` within the top k, 0 without a relevant item there."""
    cut = ranks.cut(k)
    if cut == 0:
        return np.zeros(ranks.matrix.n_queries)
    window = ranks.matrix.relevant[:, :cut]
    first = window.argmax(axis=1)
    return np.where(window.any(axis=1), 1.0 / (first + 1.0), 0.0)


MEASURE = Measure(
    family="MRR",
    meaning="mean reciprocal rank",
    order=40,
    cutoff="optional",
    examples=("MRR", "MRR@10"),
    aliases=("rr", "recip_rank"),
    pure=lambda ranking, grades, relevant, k, gain: reciprocal_rank(ranking, relevant, k),
    kernel=kernel,
    trec_eval=TrecName(whole="recip_rank"),
    ranx=lambda k, threshold, gain: "mrr" + ("" if k is None else f"@{k}") + level(threshold),
    known_answers=(
        KnownAnswer(
            "lesson: RR third position", "MRR", ("X", "Y", "B", "A"), dict.fromkeys("AB", 1), 1 / 3, "1/3"
        ),
        KnownAnswer("lesson: RR no hit", "MRR", ("X", "Y"), {"A": 1}, 0.0, "no relevant item"),
        KnownAnswer("MRR cut-off", "MRR@2", ("X", "Y", "A"), {"A": 1}, 0.0, "first hit at rank 3 > k"),
    ),
)
