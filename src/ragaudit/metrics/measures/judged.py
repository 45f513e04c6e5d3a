"""Judged@k: the share of the top k that is judged — the hole rate of labels pooled from other systems.

``Judged@k = |{first occurrences in top_k with a grade in the judgments}| / min(k, |ranking|)``

* judged means *any* grade, grade 0 (judged non-relevant) included; the relevance threshold plays
  no part, so ``1 - Judged@k`` is the share of the top k nobody labelled;
* the denominator is what was returned within the top k (as ir_measures' ``Judged@k``), so a short
  list is not mistaken for holes; an empty ranking scores ``0`` (nothing returned, nothing judged);
* a duplicate keeps its slot but is not judged again (the policy's first-occurrence rule);
* a negative grade in TREC qrels is trec_eval's "in the pool but unjudged": the readers leave the pair
  out of the judgments (:mod:`ragaudit.data.trec`), so it is **not** judged here; ir_measures counts
  any qrels line, so it would count such a pair as judged. The pure function, like the others,
  refuses negative grades (``ValueError``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ragaudit.metrics.matrix import FloatArray, Ranks
from ragaudit.metrics.measure import KnownAnswer, Measure, required
from ragaudit.metrics.pure import Gain, _check_grades, _check_k, _first_occurrences


def judged_at_k(retrieved_ids: Sequence[str], relevance: Mapping[str, int], k: int) -> float:
    """Judged@k of one ranking against ``{doc_id: grade}`` (see the module docstring)."""
    _check_k(k)
    _check_grades(relevance)
    returned = min(k, len(retrieved_ids))
    if returned == 0:
        return 0.0
    return sum(1 for _, doc_id in _first_occurrences(retrieved_ids, k) if doc_id in relevance) / returned


def kernel(ranks: Ranks, k: int | None, gain: Gain) -> FloatArray:
    """Judged slots in the top k over ``min(k, ranking length)``; 0 for an empty ranking."""
    matrix = ranks.matrix
    if matrix.judged is None or matrix.length is None:
        raise ValueError(
            "Judged@k needs RankMatrix.judged and .length; build the matrix with build_rank_matrix"
        )
    cut = ranks.cut(k)
    judged = matrix.judged[:, :cut].sum(axis=1).astype(np.float64)
    returned = np.minimum(matrix.length, cut).astype(np.float64)
    values = np.zeros(matrix.n_queries)
    np.divide(judged, returned, out=values, where=returned > 0)
    return values


MEASURE = Measure(
    family="Judged",
    meaning="judged share of the top k (any grade, 0 included; 1 - hole rate)",
    order=80,
    cutoff="required",
    examples=("Judged@10",),
    pure=lambda ranking, grades, relevant, k, gain: judged_at_k(ranking, grades, required(k, "Judged")),
    kernel=kernel,
    reads_judged=True,
    ir_measures=lambda k: None if k is None else f"Judged@{k}",
    known_answers=(
        KnownAnswer(
            "judged: grade 0 counts as judged",
            "Judged@3",
            ("A", "Z", "X"),
            {"A": 1, "Z": 0},
            2 / 3,
            "A and Z of 3",
        ),
        KnownAnswer(
            "judged: a short list divides by its length",
            "Judged@5",
            ("A", "X"),
            {"A": 1},
            0.5,
            "1 of 2 returned",
        ),
        KnownAnswer(
            "judged: a duplicate is judged once",
            "Judged@2",
            ("A", "A"),
            {"A": 2},
            0.5,
            "the copy spends slot 2",
        ),
    ),
)
