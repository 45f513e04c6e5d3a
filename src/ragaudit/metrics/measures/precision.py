"""P@k: precision with a fixed-k denominator, ``|top_k ∩ Rel| / k`` (see :func:`~ragaudit.metrics.pure.precision_at_k`)."""

from __future__ import annotations

from ragaudit.metrics.matrix import FloatArray, Ranks
from ragaudit.metrics.measure import KnownAnswer, Measure, TrecName, level, required
from ragaudit.metrics.pure import Gain, precision_at_k


def kernel(ranks: Ranks, k: int | None, gain: Gain) -> FloatArray:
    """Hits in the top k over k (a short list is penalised for its missing slots)."""
    return ranks.hits(k) / float(k if k is not None else max(ranks.matrix.depth, 1))


MEASURE = Measure(
    family="P",
    meaning="precision (fixed-k denominator)",
    order=30,
    cutoff="required",
    examples=("P@5",),
    aliases=("precision",),
    pure=lambda ranking, grades, relevant, k, gain: precision_at_k(ranking, relevant, required(k, "P")),
    kernel=kernel,
    trec_eval=TrecName(cut="P"),
    ranx=lambda k, threshold, gain: None if k is None else f"precision@{k}{level(threshold)}",
    known_answers=(
        KnownAnswer(
            "lesson: precision@4 fixed k", "P@4", ("A", "X", "B", "Y"), dict.fromkeys("ABC", 1), 0.5, "2/4"
        ),
        KnownAnswer("short list, fixed k", "P@5", ("A",), {"A": 1}, 0.2, "1 hit / k=5, not / 1 returned"),
    ),
)
