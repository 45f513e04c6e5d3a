"""MAP: mean average precision, ``AP@k = (1/|Rel|) Σ_{i<=k, item_i ∈ Rel} P@i`` (see :func:`~ragaudit.metrics.pure.average_precision`)."""

from __future__ import annotations

import numpy as np

from ragaudit.metrics.matrix import FloatArray, Ranks, safe_div
from ragaudit.metrics.measure import KnownAnswer, Measure, TrecName, level
from ragaudit.metrics.pure import Gain, average_precision


def kernel(ranks: Ranks, k: int | None, gain: Gain) -> FloatArray:
    """Precision at each relevant rank within the top k, summed, over all relevant items (``nan`` if none)."""
    cut = ranks.cut(k)
    positions = np.arange(1, cut + 1, dtype=np.float64)
    precision_at_hits = np.where(ranks.matrix.relevant[:, :cut], ranks.cum_hits[:, :cut] / positions, 0.0)
    return safe_div(precision_at_hits.sum(axis=1), ranks.matrix.n_relevant)


MEASURE = Measure(
    family="MAP",
    meaning="mean average precision",
    order=50,
    cutoff="optional",
    examples=("MAP", "MAP@100"),
    aliases=("ap",),
    pure=lambda ranking, grades, relevant, k, gain: average_precision(ranking, relevant, k),
    kernel=kernel,
    needs_relevant=True,
    trec_eval=TrecName("map", "map_cut"),
    ranx=lambda k, threshold, gain: "map" + ("" if k is None else f"@{k}") + level(threshold),
    known_answers=(
        KnownAnswer(
            "AP over all relevant",
            "MAP",
            ("A", "X", "B"),
            dict.fromkeys("ABC", 1),
            (1 + 2 / 3) / 3,
            "(1 + 2/3) / 3",
        ),
    ),
)
