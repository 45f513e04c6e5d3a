"""Convex fusion as ``ragaudit fit-fusion`` fits it: ``(1 - w) · minmax(bm25) + w · minmax(dense)``
(``method = "weighted"``), with the dense weight ``w`` chosen from 0, 0.1, ..., 1 by the first metric's
mean on the training cases (ties: the ``w`` nearest 0.5), and the ``[retriever] weights`` it writes."""

from __future__ import annotations

from collections.abc import Sequence

from ragaudit.experiments.fusion_cases import CaseData, FloatArray
from ragaudit.retrieval.fusion import weighted_fuse

CONVEX_GRID = tuple(round(0.1 * i, 1) for i in range(11))


def convex_ranking(c: CaseData, weight: float, depth: int) -> list[str]:
    fused = weighted_fuse(list(c.lists), [1.0 - weight, weight], "minmax")
    return [chunk_id for chunk_id, _ in fused[:depth]]


def pick_weight(table: FloatArray, rows: Sequence[int]) -> float:
    """The grid weight with the best mean over ``rows`` of ``table`` (cases x weights); ties nearest 0.5."""
    means = table[list(rows)].mean(axis=0)
    best = float(means.max())
    tied = [w for w, m in zip(CONVEX_GRID, means, strict=True) if m >= best - 1e-12]
    return min(tied, key=lambda w: (abs(w - 0.5), w))


def convex_weights(dense_weight: float, components: tuple[int, int]) -> list[float]:
    """``[retriever] weights`` for a dense weight, in the hybrid's component order (bm25 at
    ``components[0]``, dense at ``components[1]``)."""
    weights = [0.0, 0.0]
    weights[components[0]] = round(1.0 - dense_weight, 2)
    weights[components[1]] = dense_weight
    return weights
