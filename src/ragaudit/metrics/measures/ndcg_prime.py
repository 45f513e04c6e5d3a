"""nDCG': nDCG of the condensed list — unjudged items removed before scoring (Sakai 2007).

``nDCG'@k = DCG@k(condensed) / IDCG@k``, where ``condensed`` is the ranking with every item that has no
judgment removed (an item of any grade, 0 included, stays), so the top k are the first k *judged*
items, however deep they were ranked:

* the ideal ranking is nDCG's (every judged item with grade > 0, retrieved or not), so only the
  ranking is condensed; gain and the 0-when-IDCG-is-0 rule are nDCG's;
* a duplicate is removed like an unjudged item (it is not a judged item of its own; the policy's
  first-occurrence rule), so a repeated id never pushes a judged one down;
* it equals trec_eval's ``ndcg_cut.k`` / ``ndcg`` run with ``-J`` (judged documents only;
  pytrec_eval's ``judged_docs_only_flag``) under ``--gain linear``, and ir_measures'
  ``nDCG(judged_only=True)@k``. A negative TREC grade (in the pool, unjudged) is removed, as in
  trec_eval.

Removing the holes scores a system as if the pool had judged what it returned: a run full of
unjudged documents is no longer scored as if each were non-relevant, which is the bias of plain nDCG
on pooled judgments. It reads past rank k (``Measure.reads_past_cutoff``): a live retriever must
return enough results (``--top-k``) for the condensed list to fill its k slots.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ragaudit.metrics.matrix import FloatArray, Ranks, discount, gain_array
from ragaudit.metrics.measure import KnownAnswer, Measure
from ragaudit.metrics.measures.ndcg import normalised
from ragaudit.metrics.pure import Gain, _check_grades, _first_occurrences, ndcg_at_k


def condensed(retrieved_ids: Sequence[str], relevance: Mapping[str, int]) -> list[str]:
    """The ranking without unjudged items and repeated ids (first occurrences of judged ids, in order)."""
    return [doc_id for _, doc_id in _first_occurrences(retrieved_ids, None) if doc_id in relevance]


def ndcg_prime_at_k(
    retrieved_ids: Sequence[str], relevance: Mapping[str, int], k: int | None, gain: Gain = "exponential"
) -> float:
    """nDCG' at k: nDCG@k of :func:`condensed` (see the module docstring)."""
    _check_grades(relevance)
    return ndcg_at_k(condensed(retrieved_ids, relevance), relevance, k, gain)


def kernel(ranks: Ranks, k: int | None, gain: Gain) -> FloatArray:
    """Each judged slot moves to its condensed rank (judged slots up to it); DCG over condensed ranks <= k."""
    matrix = ranks.matrix
    if matrix.judged is None:
        raise ValueError("nDCG' needs RankMatrix.judged; build the matrix with build_rank_matrix")
    position = np.cumsum(matrix.judged, axis=1)
    keep = matrix.judged if k is None else matrix.judged & (position <= k)
    discounts = discount(matrix.depth)[np.maximum(position - 1, 0)]
    dcg = np.where(keep, gain_array(matrix.grades, gain) * discounts, 0.0).sum(axis=1)
    return normalised(dcg, ranks, k, gain)


MEASURE = Measure(
    family="nDCG'",
    meaning="nDCG of the condensed list: unjudged items removed before scoring",
    order=85,
    cutoff="optional",
    examples=("nDCG'@10",),
    pure=lambda ranking, grades, relevant, k, gain: ndcg_prime_at_k(ranking, grades, k, gain),
    kernel=kernel,
    aliases=("ndcg_prime", "ndcgp", "ndcg_condensed"),
    reads_ideal=True,
    reads_judged=True,
    reads_past_cutoff=True,
    known_answers=(
        KnownAnswer(
            "condensed: an unjudged item is removed, not scored 0",
            "nDCG'@2",
            ("X", "A", "B"),
            {"A": 1, "B": 1},
            1.0,
            "X has no judgment: the condensed list is A, B (ideal)",
        ),
        KnownAnswer(
            "condensed: grade 0 stays in the list",
            "nDCG'@1",
            ("Z", "X", "A"),
            {"Z": 0, "A": 1},
            0.0,
            "Z (judged non-relevant) keeps rank 1",
        ),
        KnownAnswer(
            "condensed: the ideal still counts unretrieved items",
            "nDCG'@2",
            ("X", "A"),
            {"A": 1, "B": 1},
            1 / (1 + 1 / np.log2(3)),
            "A moves to rank 1; B was never retrieved",
        ),
    ),
)
