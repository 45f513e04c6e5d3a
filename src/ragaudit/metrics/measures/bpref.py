"""bpref: binary preference over judged items only (Buckley & Voorhees 2004), exactly trec_eval's ``bpref``.

``bpref = (1/R) Σ_{r ∈ Rel retrieved} (1 − min(n_r, R) / min(N, R))``, a term being ``1`` when
``n_r = 0``, where ``R = |Rel|``, ``N`` the number of judged non-relevant items (grade below the
relevance threshold, retrieved or not) and ``n_r`` the judged non-relevant items ranked above ``r``.

* unjudged items are skipped (neither preferred nor penalised), so holes do not lower it; a negative
  TREC grade (in the pool, unjudged) is skipped too, as in trec_eval (the readers drop the pair);
* ``N`` counts grade-0 judgments *and* grades under the threshold (trec_eval's ``rel_levels`` below
  ``-l``); ``R`` counts every relevant item, retrieved or not;
* a duplicate is skipped (first-occurrence rule; trec_eval refuses duplicates);
* undefined without a relevant item (an unanswerable case; trec_eval scores 0 there, see the policy);
* ``bpref@k`` reads only the top k (as trec_eval's ``-M k``); plain ``bpref`` is trec_eval's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set

import numpy as np

from ragaudit.metrics.matrix import FloatArray, Ranks, safe_div
from ragaudit.metrics.measure import KnownAnswer, Measure, TrecName
from ragaudit.metrics.pure import Gain, _check_grades, _check_k, _first_occurrences, _require_relevant


def bpref(
    retrieved_ids: Sequence[str], relevance: Mapping[str, int], relevant_ids: Set[str], k: int | None = None
) -> float:
    """bpref of one ranking (see the module docstring); ``ValueError`` when ``relevant_ids`` is empty."""
    _check_k(k)
    _check_grades(relevance)
    _require_relevant(relevant_ids, "bpref")
    n_rel = len(relevant_ids)
    n_nonrel = sum(1 for doc_id in relevance if doc_id not in relevant_ids)
    above = 0
    total = 0.0
    for _, doc_id in _first_occurrences(retrieved_ids, k):
        if doc_id in relevant_ids:
            total += 1.0 - min(above, n_rel) / min(n_nonrel, n_rel) if above > 0 else 1.0
        elif doc_id in relevance:
            above += 1
    return total / n_rel


def kernel(ranks: Ranks, k: int | None, gain: Gain) -> FloatArray:
    """Judged non-relevant items above each relevant one, capped at R, over ``min(N, R)``; ``nan`` if R is 0."""
    matrix = ranks.matrix
    if matrix.judged is None or matrix.n_nonrelevant is None:
        raise ValueError("bpref needs RankMatrix.judged and .n_nonrelevant; build it with build_rank_matrix")
    cut = ranks.cut(k)
    relevant = matrix.relevant[:, :cut]
    nonrel = matrix.judged[:, :cut] & ~relevant
    above: FloatArray = (np.cumsum(nonrel, axis=1) - nonrel).astype(np.float64)
    n_rel = matrix.n_relevant.astype(np.float64)[:, None]
    denominator = np.broadcast_to(np.minimum(matrix.n_nonrelevant, matrix.n_relevant)[:, None], above.shape)
    penalty = np.zeros_like(above)
    np.divide(np.minimum(above, n_rel), denominator, out=penalty, where=(above > 0) & (denominator > 0))
    return safe_div(np.where(relevant, 1.0 - penalty, 0.0).sum(axis=1), matrix.n_relevant)


MEASURE = Measure(
    family="bpref",
    meaning="binary preference: relevant items ranked above judged non-relevant ones (unjudged skipped)",
    order=90,
    cutoff="optional",
    examples=("bpref",),
    pure=lambda ranking, grades, relevant, k, gain: bpref(ranking, grades, relevant, k),
    kernel=kernel,
    needs_relevant=True,
    reads_judged=True,
    trec_eval=TrecName("bpref", None),
    ir_measures=lambda k: "Bpref" if k is None else None,
    known_answers=(
        KnownAnswer(
            "bpref: unjudged items are skipped",
            "bpref",
            ("X", "A", "Y", "B"),
            {"A": 1, "B": 1, "Z": 0},
            1.0,
            "X and Y are holes; no judged non-relevant item is above A or B",
        ),
        KnownAnswer(
            "bpref: a judged non-relevant item above a relevant one",
            "bpref",
            ("Z", "A", "B"),
            {"A": 1, "B": 1, "Z": 0, "W": 0},
            0.5,
            "R = 2, N = 2: A and B each get 1 - 1/2",
        ),
        KnownAnswer(
            "bpref: an unretrieved relevant item counts in R",
            "bpref",
            ("A",),
            {"A": 1, "B": 1},
            0.5,
            "1 of R = 2",
        ),
    ),
)
