"""Hit@k (success@k): ``1`` if any relevant item is in the top k, else ``0`` (see :func:`~ragaudit.metrics.pure.hit_at_k`)."""

from __future__ import annotations

import numpy as np

from ragaudit.metrics.matrix import FloatArray, Ranks
from ragaudit.metrics.measure import KnownAnswer, Measure, TrecName, level, required
from ragaudit.metrics.pure import Gain, hit_at_k


def kernel(ranks: Ranks, k: int | None, gain: Gain) -> FloatArray:
    """Whether the top k holds a hit, as 0.0 / 1.0."""
    return (ranks.hits(k) > 0).astype(np.float64)


MEASURE = Measure(
    family="Hit",
    meaning="hit rate (any relevant item in the top k)",
    order=60,
    cutoff="required",
    examples=("Hit@5",),
    aliases=("hits", "success", "hit_rate"),
    pure=lambda ranking, grades, relevant, k, gain: hit_at_k(ranking, relevant, required(k, "Hit")),
    kernel=kernel,
    trec_eval=TrecName(cut="success"),
    ranx=lambda k, threshold, gain: None if k is None else f"hit_rate@{k}{level(threshold)}",
    known_answers=(KnownAnswer("hit@2", "Hit@2", ("X", "A"), {"A": 1}, 1.0, "a relevant item in the top 2"),),
)
