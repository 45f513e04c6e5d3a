"""Inter-annotator agreement on graded (ordinal) relevance labels.

Two measures, both chance-corrected (1 = perfect agreement, 0 = what chance gives, below 0 = worse):

* **Weighted Cohen's kappa** for exactly two annotators who labelled the same items::

      kappa_w = 1 - sum_ij w_ij O_ij / sum_ij w_ij E_ij

  ``O`` is the observed confusion matrix of the two annotators' grades, ``E`` the one expected by
  chance (the outer product of their marginals, scaled to the same total), and ``w_ij`` the
  disagreement weight: ``|i - j|`` (linear) or ``(i - j)**2`` (quadratic), over the grade categories.
  Same definition as scikit-learn's ``cohen_kappa_score(weights=...)``.

* **Krippendorff's alpha** (ordinal) for any number of annotators, with missing labels allowed::

      alpha = 1 - (n - 1) * sum_ck o_ck d_ck / sum_ck n_c n_k d_ck

  ``o`` is the coincidence matrix: every unit (item) labelled by ``m_u >= 2`` annotators adds
  ``1 / (m_u - 1)`` to ``o[c, k]`` for every ordered pair of its labels from different annotators;
  ``n_c`` are its row sums and ``n`` their total. The ordinal distance is
  ``d_ck = (sum_{g=c..k} n_g - (n_c + n_k) / 2) ** 2`` (Krippendorff 2011, "Computing Krippendorff's
  Alpha-Reliability"). Units labelled by fewer than two annotators carry no information and are left out.

Both return ``nan`` when undefined (no pairable items, or a single category used throughout, where
chance agreement is already perfect).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np

Weights = Literal["linear", "quadratic"]


def _categories(*columns: Sequence[int | None]) -> list[int]:
    return sorted({v for column in columns for v in column if v is not None})


def weighted_kappa(a: Sequence[int], b: Sequence[int], weights: Weights = "quadratic") -> float:
    """Weighted Cohen's kappa of two annotators' grades for the same items (``a[i]`` and ``b[i]``)."""
    if len(a) != len(b):
        raise ValueError(f"both annotators must label the same items ({len(a)} vs {len(b)} labels)")
    if not a:
        return math.nan
    cats = _categories(a, b)
    index = {c: i for i, c in enumerate(cats)}
    k = len(cats)
    observed = np.zeros((k, k))
    for x, y in zip(a, b, strict=True):
        observed[index[x], index[y]] += 1
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0)) / observed.sum()
    grid = np.arange(k, dtype=float)
    distance = np.abs(grid[:, None] - grid[None, :])
    w = distance if weights == "linear" else distance**2
    denominator = float((w * expected).sum())
    if denominator == 0.0:
        return math.nan
    return 1.0 - float((w * observed).sum()) / denominator


def krippendorff_alpha_ordinal(units: Sequence[Sequence[int | None]]) -> float:
    """Krippendorff's alpha (ordinal) of ``units[u][annotator]`` grades, ``None`` where not labelled."""
    cats = _categories(*units)
    if not cats:
        return math.nan
    index = {c: i for i, c in enumerate(cats)}
    k = len(cats)
    coincidence = np.zeros((k, k))
    for unit in units:
        values = [index[v] for v in unit if v is not None]
        m = len(values)
        if m < 2:
            continue
        counts = np.bincount(values, minlength=k).astype(float)
        # ordered pairs of labels from different annotators: n_c * n_k, minus the c == k self-pairs
        pairs = np.outer(counts, counts) - np.diag(counts)
        coincidence += pairs / (m - 1)
    n_c = coincidence.sum(axis=1)
    n = float(n_c.sum())
    if n <= 1:
        return math.nan
    cumulative = np.concatenate([[0.0], np.cumsum(n_c)])
    distance = np.zeros((k, k))
    for c in range(k):
        for d in range(k):
            lo, hi = min(c, d), max(c, d)
            distance[c, d] = (cumulative[hi + 1] - cumulative[lo] - (n_c[c] + n_c[d]) / 2.0) ** 2
    expected = float((np.outer(n_c, n_c) * distance).sum())
    if expected == 0.0:
        return math.nan
    return 1.0 - (n - 1.0) * float((coincidence * distance).sum()) / expected
