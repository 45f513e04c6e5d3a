"""How many cases a golden set needs: power of the paired t-test on per-case metric differences.

For per-case differences ``d_i = system_i - baseline_i`` with standard deviation ``s``, the paired
two-sided t-test at level ``alpha`` on ``n`` cases detects a true mean difference ``delta`` with power::

    power(n) ~= P(T_{n-1} > t_{1-alpha/2, n-1} - |delta| * sqrt(n) / s)

(the normal-shift approximation of the noncentral t; the far tail is ignored). Hence:

* **cases needed** for ``delta``: the smallest ``n >= 2`` with ``power(n) >= target``;
* **smallest detectable difference** with the ``n`` cases at hand::

      delta_min = (t_{1-alpha/2, n-1} + t_{target, n-1}) * s / sqrt(n)

``s`` is estimated from the cases at hand, so both figures are as good as that estimate (validated by
simulation in ``docs/experiments.md``). Quantiles come from :mod:`ragaudit.stats.tdist` (no SciPy).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ragaudit.stats.tdist import t_two_sided_p

MAX_CASES = 10_000_000


def t_upper_tail(t: float, df: float) -> float:
    """``P(T_df > t)``."""
    half = t_two_sided_p(abs(t), df) / 2.0
    return half if t >= 0 else 1.0 - half


def t_quantile(prob: float, df: float) -> float:
    """The ``prob`` quantile of Student's t with ``df`` degrees of freedom (bisection, |error| < 1e-10)."""
    if not 0.0 < prob < 1.0:
        raise ValueError(f"prob must be within (0, 1) (got {prob})")
    lo, hi = -1e3, 1e3
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if 1.0 - t_upper_tail(mid, df) < prob:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-10:
            break
    return (lo + hi) / 2.0


def paired_power(sd: float, n: int, delta: float, alpha: float = 0.05) -> float:
    """Power of the two-sided paired t-test on ``n`` cases for a true mean difference ``delta``."""
    if n < 2:
        return math.nan
    if sd <= 0:
        return 1.0 if delta != 0 else alpha
    critical = t_quantile(1.0 - alpha / 2.0, n - 1)
    return t_upper_tail(critical - abs(delta) * math.sqrt(n) / sd, n - 1)


def cases_needed(sd: float, delta: float, alpha: float = 0.05, power: float = 0.8) -> int:
    """The smallest number of cases whose paired t-test detects ``delta`` with at least ``power``."""
    if delta == 0:
        raise ValueError("delta must be non-zero")
    if sd <= 0:
        return 2
    z_sum = t_quantile(1.0 - alpha / 2.0, 1e6) + t_quantile(power, 1e6)
    n = max(2, math.ceil((z_sum * sd / abs(delta)) ** 2))  # the normal answer: a lower bound
    while paired_power(sd, n, delta, alpha) < power and n < MAX_CASES:
        n += max(1, n // 50)
    while n > 2 and paired_power(sd, n - 1, delta, alpha) >= power:
        n -= 1
    return n


def detectable_delta(sd: float, n: int, alpha: float = 0.05, power: float = 0.8) -> float:
    """The smallest true mean difference ``n`` cases detect with ``power`` (``nan`` for ``n < 2``)."""
    if n < 2:
        return math.nan
    return (t_quantile(1.0 - alpha / 2.0, n - 1) + t_quantile(power, n - 1)) * sd / math.sqrt(n)


@dataclass(frozen=True)
class PowerEstimate:
    """What a set of per-case differences says about the set's size."""

    cases: int
    mean_difference: float
    sd: float
    alpha: float
    power: float
    delta: float
    cases_needed: int | None
    """Cases needed to detect ``delta`` (``None`` when the spread is unknown: fewer than 2 cases)."""
    detectable: float
    """The smallest difference the current cases detect (``nan`` when it cannot be estimated)."""
    reason: str | None = None
    """Why the power cannot be estimated (fewer than 2 cases, or differences with zero spread), else ``None``."""

    @property
    def estimable(self) -> bool:
        return self.reason is None

    def to_json(self) -> dict[str, object]:
        return {
            "cases": self.cases,
            "mean_difference": self.mean_difference,
            "sd_of_differences": self.sd,
            "alpha": self.alpha,
            "power": self.power,
            "delta": self.delta,
            "cases_needed": self.cases_needed,
            "smallest_detectable_delta": None if math.isnan(self.detectable) else self.detectable,
            "estimable": self.estimable,
            **({"reason": self.reason} if self.reason else {}),
        }


def estimate_power(
    differences: Sequence[float], delta: float, alpha: float = 0.05, power: float = 0.8
) -> PowerEstimate:
    """Cases needed for ``delta`` and the smallest detectable difference, from observed differences.

    Both rest on the differences' spread: with fewer than 2 cases, or a spread of zero (every case the
    same difference: the t-test's variance is 0, and any n would "detect" anything), the power cannot
    be estimated; ``cases_needed`` is ``None``, ``detectable`` ``nan`` and ``reason`` says why."""
    d = np.asarray(differences, dtype=float)
    n = len(d)
    sd = float(d.std(ddof=1)) if n >= 2 else math.nan
    mean = float(d.mean()) if n else math.nan
    if n < 2:
        reason = f"{n} case(s): a spread needs at least 2"
    elif not sd > 1e-12:
        reason = (
            f"the {n} per-case values have zero spread (all {mean:.4f}): a paired t-test has no variance "
            "to work with, so the power cannot be estimated from these cases"
        )
    else:
        reason = None
    if reason is not None:
        return PowerEstimate(n, mean, sd, alpha, power, delta, None, math.nan, reason)
    needed = cases_needed(sd, delta, alpha, power)
    return PowerEstimate(n, mean, sd, alpha, power, delta, needed, detectable_delta(sd, n, alpha, power))
