"""Multiple-testing correction across every comparison of one table."""

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
