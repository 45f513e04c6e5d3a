"""Paired significance tests and effect sizes over per-query metric values.

Inputs are two equal-length arrays ``a`` (baseline) and ``b`` (system) holding one metric's value per
query, aligned by query. ``d = b - a``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ragaudit.stats.tdist import t_two_sided_p

FloatArray = npt.NDArray[np.float64]
EXACT_LIMIT = 16
"""Up to this many non-zero differences the randomization test enumerates all 2^n sign flips."""


def _diffs(a: Sequence[float] | FloatArray, b: Sequence[float] | FloatArray) -> FloatArray:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired inputs need equal 1-d shapes (got {x.shape} and {y.shape})")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("paired inputs must be finite (unanswerable cases belong outside the comparison)")
    return y - x


@dataclass(frozen=True)
class TTest:
    statistic: float
    df: int
    p_value: float


def paired_t_test(a: Sequence[float] | FloatArray, b: Sequence[float] | FloatArray) -> TTest:
    """Paired t-test: ``t = mean(d) / (sd(d) / sqrt(n))``, ``df = n - 1``, two-sided p.

    Identical pairs (``sd(d) = 0``) give ``t = 0, p = 1`` when the mean difference is 0, and
    ``t = ±inf, p = 0`` otherwise.
    """
    d = _diffs(a, b)
    n = d.size
    if n < 2:
        return TTest(math.nan, max(n - 1, 0), math.nan)
    mean, sd = float(d.mean()), float(d.std(ddof=1))
    if sd == 0.0:
        return TTest(0.0, n - 1, 1.0) if mean == 0.0 else TTest(math.copysign(math.inf, mean), n - 1, 0.0)
    t = mean / (sd / math.sqrt(n))
    return TTest(t, n - 1, t_two_sided_p(t, n - 1))


def randomization_test(
    a: Sequence[float] | FloatArray,
    b: Sequence[float] | FloatArray,
    n_resamples: int = 10_000,
    rng: np.random.Generator | None = None,
    seed: int = 0,
) -> float:
    """Two-sided paired randomization (sign-flip permutation) test of the mean difference.

    Under H0 each ``d_i`` is equally likely to have either sign. ``p = P(|mean(s·d)| >= |mean(d)|)``
    over sign vectors ``s``: enumerated exactly when there are at most ``EXACT_LIMIT`` non-zero
    differences, otherwise estimated from ``n_resamples`` random flips as ``(hits + 1) / (n + 1)``
    (never zero; matches ``scipy.stats.permutation_test``).
    """
    d = _diffs(a, b)
    d = d[d != 0.0]
    if d.size == 0:
        return 1.0
    observed = abs(float(d.mean()))
    tolerance = 1e-12 * max(1.0, observed)
    if d.size <= EXACT_LIMIT:
        signs = ((np.arange(2**d.size)[:, None] >> np.arange(d.size)) & 1) * 2 - 1
        stats = np.abs(signs @ d) / d.size
        return float(np.mean(stats >= observed - tolerance))
    generator = rng if rng is not None else np.random.default_rng(seed)
    hits = 0
    remaining = n_resamples
    while remaining:
        block = min(remaining, 2_000)
        signs = generator.integers(0, 2, size=(block, d.size), dtype=np.int8) * 2 - 1
        hits += int(np.count_nonzero(np.abs(signs @ d) / d.size >= observed - tolerance))
        remaining -= block
    return (hits + 1) / (n_resamples + 1)


def paired_effect_size(a: Sequence[float] | FloatArray, b: Sequence[float] | FloatArray) -> float:
    """Standardised mean difference of paired data (Cohen's d_z): ``mean(d) / sd(d)``; 0 if ``sd = 0``."""
    d = _diffs(a, b)
    if d.size < 2:
        return math.nan
    sd = float(d.std(ddof=1))
    return float(d.mean()) / sd if sd > 0 else 0.0


@dataclass(frozen=True)
class WinTieLoss:
    wins: int
    ties: int
    losses: int


def win_tie_loss(
    a: Sequence[float] | FloatArray, b: Sequence[float] | FloatArray, tie_tolerance: float = 1e-12
) -> WinTieLoss:
    """How many queries the system (``b``) improved, left unchanged, or made worse."""
    d = _diffs(a, b)
    return WinTieLoss(
        int((d > tie_tolerance).sum()),
        int((np.abs(d) <= tie_tolerance).sum()),
        int((d < -tie_tolerance).sum()),
    )
