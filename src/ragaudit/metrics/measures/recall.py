"""R@k: recall, ``|top_k ∩ Rel| / |Rel|`` (see :func:`~ragaudit.metrics.pure.recall_at_k`)."""

from __future__ import annotations

from ragaudit.metrics.matrix import FloatArray, Ranks, safe_div
from ragaudit.metrics.measure import KnownAnswer, Measure, TrecName, level, required
from ragaudit.metrics.pure import Gain, recall_at_k


def kernel(ranks: Ranks, k: int | None, gain: Gain) -> FloatArray:
    """Hits in the top k over the relevant-set size; ``nan`` where it is empty."""
    return safe_div(ranks.hits(k), ranks.matrix.n_relevant)


MEASURE = Measure(
    family="R",
    meaning="recall",
    order=20,
    cutoff="required",
    examples=("R@100",),
    aliases=("recall",),
    pure=lambda ranking, grades, relevant, k, gain: recall_at_k(ranking, relevant, required(k, "R")),
    kernel=kernel,
    needs_relevant=True,
    trec_eval=TrecName(cut="recall"),
    ranx=lambda k, threshold, gain: None if k is None else f"recall@{k}{level(threshold)}",
    known_answers=(
        KnownAnswer("lesson: recall@3", "R@3", ("A", "X", "B", "Y"), dict.fromkeys("ABCD", 1), 0.5, "2 of 4"),
        KnownAnswer(
            "duplicates count once",
            "R@2",
            ("A", "A", "B"),
            dict.fromkeys("AB", 1),
            0.5,
            "the copy spends slot 2",
        ),
    ),
)
