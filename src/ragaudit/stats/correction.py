"""Multiple-testing correction across every comparison of one table, and the matching CI level.

p-values are Holm-adjusted (:func:`holm_bonferroni`). Holm's step-down procedure has no confidence
interval of its own, so the CI shown beside a Holm-adjusted p is the Bonferroni-adjusted one
(:func:`bonferroni_confidence`): each of the ``m`` intervals at level ``1 - alpha/m``, which together
cover all ``m`` true deltas with probability at least ``1 - alpha`` (the usual practice, e.g. R's
``emmeans`` uses Bonferroni intervals when p-values are Holm-adjusted). Holm rejects everything
Bonferroni rejects, so an adjusted CI that excludes 0 comes with a significant Holm p (up to the
difference between the bootstrap interval and the randomization test); a significant Holm p whose
CI still includes 0 is possible, and the reports label both so the reader knows which is which."""

from __future__ import annotations

import math
from collections.abc import Sequence


def holm_bonferroni(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values (family-wise error control).

    Sort the m p-values ascending; ``p_adj(i) = max_{j<=i} min(1, (m - j + 1) · p(j))``; return them in
    the input order. NaN p-values stay NaN and do not count towards m.
    """
    indexed = sorted((p, i) for i, p in enumerate(p_values) if not math.isnan(p))
    m = len(indexed)
    adjusted = [math.nan] * len(p_values)
    running = 0.0
    for rank, (p, i) in enumerate(indexed):
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[i] = running
    return adjusted


def bonferroni_confidence(alpha: float, m: int) -> float:
    """The confidence level ``1 - alpha/m`` of each of ``m`` simultaneous (Bonferroni) intervals."""
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be in (0, 1) (got {alpha})")
    return 1.0 - alpha / max(m, 1)


def ci_method(confidence: float, m: int) -> str:
    """How a delta's CI was made, for reports: ``percentile bootstrap, 98.75% = 1 - alpha/m
    (Bonferroni, m = 4; simultaneous, matches the Holm-adjusted p)``."""
    if m <= 1:
        return f"percentile bootstrap, {confidence:.4g} (one comparison: no adjustment needed)"
    return (
        f"percentile bootstrap at {confidence:.4g} = 1 - alpha/m (Bonferroni, m = {m}; simultaneous "
        "intervals beside Holm-adjusted p-values)"
    )
