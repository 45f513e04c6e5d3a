"""Per-query retrieval metrics as pure functions.

These are the reference definitions: small, readable, and checked against trec_eval (through
pytrec_eval) and ranx in the tests. The bulk engine (:mod:`ragaudit.metrics.bulk`) computes the
same numbers for many queries at once and is property-tested equal to these functions.

Shared conventions (the semantics policy, see ``docs/metrics.md``):

* ``retrieved_ids`` is a ranking, best first. Ranks start at 1.
* A duplicate id counts once, at its first occurrence; a later copy keeps its slot in the ranking
  but gains nothing (the slot was spent in the context window).
* ``k`` must be a positive integer; ``k=None`` where allowed means the whole list.
* Grades are non-negative integers (0 judged non-relevant .. 3 authoritative); a negative grade
  raises ``ValueError``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence, Set
from math import log2
from typing import Literal

Gain = Literal["exponential", "linear"]


def _check_k(k: int | None) -> None:
    if k is not None and (isinstance(k, bool) or not isinstance(k, int) or k <= 0):
        raise ValueError(f"k must be a positive integer (got {k!r}); use e.g. k=10")


def _check_grades(relevance: Mapping[str, int]) -> None:
    for doc_id, grade in relevance.items():
        if grade < 0:
            raise ValueError(
                f"Relevance grades cannot be negative (got {grade} for {doc_id!r}); use 0 for judged non-relevant"
            )


def _first_occurrences(retrieved_ids: Sequence[str], k: int | None) -> Iterator[tuple[int, str]]:
    """Yield ``(rank, id)`` for the first occurrence of each id within the top ``k``."""
    seen: set[str] = set()
    for rank, doc_id in enumerate(retrieved_ids[:k] if k is not None else retrieved_ids, start=1):
        if doc_id not in seen:
            seen.add(doc_id)
            yield rank, doc_id


def _require_relevant(relevant_ids: Set[str], name: str) -> None:
    if not relevant_ids:
        raise ValueError(
            f"{name} is undefined for an empty relevant set (an unanswerable case); "
            "ragaudit keeps such cases out of ranking averages and scores them with abstention metrics"
        )


def recall_at_k(retrieved_ids: Sequence[str], relevant_ids: Set[str], k: int) -> float:
    """Recall@k: the share of all relevant items found in the top k.

    ``R@k = |top_k ∩ Rel| / |Rel|``. Undefined (``ValueError``) when ``Rel`` is empty.
    """
    _check_k(k)
    _require_relevant(relevant_ids, "Recall")
    hits = sum(1 for _, doc_id in _first_occurrences(retrieved_ids, k) if doc_id in relevant_ids)
    return hits / len(relevant_ids)


def precision_at_k(retrieved_ids: Sequence[str], relevant_ids: Set[str], k: int) -> float:
    """Precision@k with a fixed-k denominator.

    ``P@k = |top_k ∩ Rel| / k``: a list shorter than k is penalised for the missing slots.
    """
    _check_k(k)
    hits = sum(1 for _, doc_id in _first_occurrences(retrieved_ids, k) if doc_id in relevant_ids)
    return hits / k


def hit_at_k(retrieved_ids: Sequence[str], relevant_ids: Set[str], k: int) -> float:
    """Hit@k (success@k): ``1`` if any relevant item is in the top k, else ``0``."""
    _check_k(k)
    return 1.0 if any(doc_id in relevant_ids for doc_id in retrieved_ids[:k]) else 0.0


def reciprocal_rank(retrieved_ids: Sequence[str], relevant_ids: Set[str], k: int | None = None) -> float:
    """Reciprocal rank of the first relevant item, optionally cut at k.

    ``RR@k = 1 / rank_1`` where ``rank_1`` is the rank of the first relevant item if ``rank_1 <= k``,
    else ``0``. MRR is the mean of RR over queries.
    """
    _check_k(k)
    for rank, doc_id in _first_occurrences(retrieved_ids, k):
        if doc_id in relevant_ids:
            return 1.0 / rank
    return 0.0


def gain_of(grade: float, gain: Gain) -> float:
    """The gain of one grade: ``2^rel - 1`` (exponential, the default) or ``rel`` (linear, trec_eval)."""
    if gain == "exponential":
        return float(2.0**grade - 1.0)
    if gain == "linear":
        return float(grade)
    raise ValueError(f"unknown gain {gain!r}; use 'exponential' or 'linear'")


def dcg_at_k(
    retrieved_ids: Sequence[str], relevance: Mapping[str, int], k: int | None, gain: Gain = "exponential"
) -> float:
    """Discounted cumulative gain at k.

    ``DCG@k = Σ_{i=1..k} g(rel_i) / log2(i + 1)`` with ``g(r) = 2^r - 1`` (exponential) or
    ``g(r) = r`` (linear); unjudged items have ``rel = 0``; a duplicate gains only once.
    """
    _check_k(k)
    _check_grades(relevance)
    return sum(
        gain_of(relevance.get(doc_id, 0), gain) / log2(rank + 1)
        for rank, doc_id in _first_occurrences(retrieved_ids, k)
    )


def ndcg_at_k(
    retrieved_ids: Sequence[str], relevance: Mapping[str, int], k: int | None, gain: Gain = "exponential"
) -> float:
    """Normalised DCG at k.

    ``nDCG@k = DCG@k / IDCG@k`` where IDCG@k is the DCG of the ideal ranking: every judged item
    with grade > 0, sorted by grade descending. Defined as ``0`` when IDCG is 0.
    """
    actual = dcg_at_k(retrieved_ids, relevance, k, gain)
    ideal_ids = sorted((d for d, g in relevance.items() if g > 0), key=lambda d: relevance[d], reverse=True)
    ideal = dcg_at_k(ideal_ids, relevance, k, gain)
    return actual / ideal if ideal > 0 else 0.0


def average_precision(retrieved_ids: Sequence[str], relevant_ids: Set[str], k: int | None = None) -> float:
    """Average precision, optionally cut at k (trec_eval's ``map`` / ``map_cut_k``).

    ``AP@k = (1 / |Rel|) Σ_{i<=k, item_i ∈ Rel} P@i``. The denominator is all relevant items,
    not ``min(k, |Rel|)``. Undefined (``ValueError``) when ``Rel`` is empty.
    """
    _check_k(k)
    _require_relevant(relevant_ids, "Average precision")
    hits = 0
    total = 0.0
    for rank, doc_id in _first_occurrences(retrieved_ids, k):
        if doc_id in relevant_ids:
            hits += 1
            total += hits / rank
    return total / len(relevant_ids)


def r_precision(retrieved_ids: Sequence[str], relevant_ids: Set[str]) -> float:
    """R-Precision: precision at rank R, where R is the number of relevant items.

    ``RPrec = |top_R ∩ Rel| / R``. Undefined (``ValueError``) when ``Rel`` is empty.
    """
    _require_relevant(relevant_ids, "R-Precision")
    return precision_at_k(retrieved_ids, relevant_ids, len(relevant_ids))
