"""Percentile bootstrap confidence intervals (seeded, vectorised)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


def bootstrap_mean_ci(
    values: Sequence[float] | npt.NDArray[np.float64],
    confidence: float = 0.95,
    n_resamples: int = 10_000,
    rng: np.random.Generator | None = None,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap CI of the mean: resample ``n`` values with replacement ``n_resamples`` times,
    take the ``(1-c)/2`` and ``(1+c)/2`` quantiles of the resampled means.

    For a paired difference pass ``b - a`` (resampling queries keeps the pairs together).
    """
    x = np.asarray(values, dtype=np.float64)
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1) (got {confidence})")
    if x.size == 0:
        return (math.nan, math.nan)
    if not np.isfinite(x).all():
        raise ValueError("bootstrap values must be finite")
    generator = rng if rng is not None else np.random.default_rng(seed)
    means = np.empty(n_resamples)
    done = 0
    block = max(1, min(n_resamples, 4_000_000 // max(x.size, 1)))
    while done < n_resamples:
        size = min(block, n_resamples - done)
        idx = generator.integers(0, x.size, size=(size, x.size))
        means[done : done + size] = x[idx].mean(axis=1)
        done += size
    alpha = (1.0 - confidence) / 2.0
    lo, hi = np.quantile(means, [alpha, 1.0 - alpha])
    return (float(lo), float(hi))
