"""nDCG: normalised discounted cumulative gain (graded), ``DCG@k / IDCG@k`` (see :func:`~ragaudit.metrics.pure.ndcg_at_k`)."""

from __future__ import annotations

import math

import numpy as np

from ragaudit.metrics.matrix import FloatArray, Ranks, discount, gain_array
from ragaudit.metrics.measure import KnownAnswer, Measure, TrecName
from ragaudit.metrics.pure import Gain, ndcg_at_k

LOG2_3 = math.log2(3)


def kernel(ranks: Ranks, k: int | None, gain: Gain) -> FloatArray:
    """``Σ g(grade_i) / log2(i + 1)`` over the top k, divided by the same over the ideal grades (0 if IDCG is 0)."""
    matrix = ranks.matrix
    cut = ranks.cut(k)
    dcg = (gain_array(matrix.grades[:, :cut], gain) * discount(cut)).sum(axis=1)
    return normalised(dcg, ranks, k, gain)


def normalised(dcg: FloatArray, ranks: Ranks, k: int | None, gain: Gain) -> FloatArray:
    """``dcg`` divided by each query's IDCG over its top k ideal grades (0 where IDCG is 0)."""
    matrix = ranks.matrix
    icut = matrix.ideal.shape[1] if k is None else min(k, matrix.ideal.shape[1])
    idcg = (gain_array(matrix.ideal[:, :icut], gain) * discount(icut)).sum(axis=1)
    values = np.zeros(matrix.n_queries)
    np.divide(dcg, idcg, out=values, where=idcg > 0)
    return values


MEASURE = Measure(
    family="nDCG",
    meaning="normalised discounted cumulative gain (graded)",
    order=10,
    cutoff="optional",
    examples=("nDCG@10",),
    pure=lambda ranking, grades, relevant, k, gain: ndcg_at_k(ranking, grades, k, gain),
    kernel=kernel,
    reads_ideal=True,
    trec_eval=TrecName("ndcg", "ndcg_cut"),
    ranx=lambda k, threshold, gain: (
        ("ndcg" if gain == "linear" else "ndcg_burges") + ("" if k is None else f"@{k}")
    ),
    known_answers=(
        KnownAnswer(
            "lesson: nDCG ideal order", "nDCG@3", ("A", "B", "C"), {"A": 3, "B": 2, "C": 1}, 1.0, "ideal"
        ),
        KnownAnswer(
            "lesson: nDCG inverted",
            "nDCG@3",
            ("C", "B", "A"),
            {"A": 3, "B": 2, "C": 1},
            (1 + 3 / LOG2_3 + 7 / 2) / (7 + 3 / LOG2_3 + 1 / 2),
            "(1 + 3/log2 3 + 7/2) / (7 + 3/log2 3 + 1/2) < 1",
        ),
        KnownAnswer(
            "graded: linear gain",
            "nDCG@3",
            ("C", "B", "A"),
            {"A": 3, "B": 2, "C": 1},
            (1 + 2 / LOG2_3 + 3 / 2) / (3 + 2 / LOG2_3 + 1 / 2),
            "gains rel, not 2^rel - 1",
            "linear",
        ),
        KnownAnswer(
            "graded: ideal counts unretrieved items",
            "nDCG@2",
            ("A",),
            {"A": 1, "B": 3},
            1 / (7 + 1 / LOG2_3),
            "IDCG ranks B (grade 3) first although it was not retrieved",
        ),
        KnownAnswer(
            "graded: grade 0 gains nothing",
            "nDCG@2",
            ("Z", "A"),
            {"Z": 0, "A": 2},
            (3 / LOG2_3) / 3,
            "a judged non-relevant item at rank 1 pushes A to rank 2",
        ),
    ),
)
