"""Agreement and power math against reference implementations (scikit-learn, krippendorff, SciPy) and
against a simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from label_fixtures import skip_without_sklearn, sklearn_kappa
from ragaudit.stats.agreement import krippendorff_alpha_ordinal, weighted_kappa
from ragaudit.stats.power import (
    cases_needed,
    detectable_delta,
    estimate_power,
    paired_power,
    t_quantile,
)

skip_without_sklearn()
krippendorff = pytest.importorskip("krippendorff")
scipy_stats = pytest.importorskip("scipy.stats")


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("weights", ["linear", "quadratic"])
def test_weighted_kappa_matches_scikit_learn(seed: int, weights: str) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 200))
    a = rng.integers(0, 4, n)
    noise = rng.integers(-2, 3, n) * (rng.random(n) < rng.random())
    b = np.clip(a + noise, 0, 3)
    ours = weighted_kappa(a.tolist(), b.tolist(), weights)  # type: ignore[arg-type]
    ref = sklearn_kappa(a, b, weights=weights)
    assert ours == pytest.approx(ref, abs=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_alpha_ordinal_matches_krippendorff_package(seed: int) -> None:
    rng = np.random.default_rng(100 + seed)
    raters, units = int(rng.integers(2, 6)), int(rng.integers(5, 120))
    truth = rng.integers(0, 4, units)
    data = np.clip(truth + rng.integers(-1, 2, (raters, units)), 0, 3).astype(float)
    data[rng.random((raters, units)) < 0.3] = np.nan
    table = [
        [None if math.isnan(data[r, u]) else int(data[r, u]) for r in range(raters)] for u in range(units)
    ]
    ref = krippendorff.alpha(reliability_data=data, level_of_measurement="ordinal", value_domain=[0, 1, 2, 3])
    assert krippendorff_alpha_ordinal(table) == pytest.approx(ref, abs=1e-9)


def test_agreement_edge_cases() -> None:
    assert weighted_kappa([2, 2, 2], [2, 2, 2]) != weighted_kappa([2, 2, 2], [2, 2, 2])  # nan: one category
    assert math.isnan(krippendorff_alpha_ordinal([[1, None], [None, 2]]))  # nothing pairable
    assert krippendorff_alpha_ordinal([[0, 0], [3, 3], [1, 1]]) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="same items"):
        weighted_kappa([1], [1, 2])


@pytest.mark.parametrize(("prob", "df"), [(0.975, 1), (0.975, 9), (0.8, 29), (0.995, 200), (0.3, 4)])
def test_t_quantile_matches_scipy(prob: float, df: int) -> None:
    assert t_quantile(prob, df) == pytest.approx(scipy_stats.t.ppf(prob, df), abs=1e-7)


def test_power_formulas_are_consistent() -> None:
    sd, delta = 0.15, 0.03
    n = cases_needed(sd, delta)
    assert paired_power(sd, n, delta) >= 0.8 > paired_power(sd, n - 1, delta)
    assert detectable_delta(sd, n) <= delta < detectable_delta(sd, n - 1)
    # the textbook normal approximation: n ~ ((1.96 + 0.84) * sd / delta)^2 = 196; t adds a little
    assert 196 <= n <= 200


@pytest.mark.parametrize(("n", "delta"), [(30, 0.05), (80, 0.03), (200, 0.02)])
def test_predicted_power_matches_simulated_detection_rate(n: int, delta: float) -> None:
    """Draw paired differences, run the t-test 4,000 times, compare the detection rate with the prediction."""
    rng = np.random.default_rng(n)
    sd, sims = 0.12, 4000
    diffs = rng.normal(delta, sd, (sims, n))
    t = diffs.mean(axis=1) / (diffs.std(axis=1, ddof=1) / math.sqrt(n))
    p = 2 * scipy_stats.t.sf(np.abs(t), n - 1)
    observed = float(np.mean(p < 0.05))
    predicted = paired_power(sd, n, delta)
    assert observed == pytest.approx(predicted, abs=0.03)


def test_estimate_power_from_differences() -> None:
    rng = np.random.default_rng(5)
    d = rng.normal(0.01, 0.1, 150)
    est = estimate_power(d.tolist(), delta=0.02)
    assert est.cases == 150
    assert est.sd == pytest.approx(float(np.std(d, ddof=1)))
    assert est.cases_needed == cases_needed(est.sd, 0.02)
    assert est.detectable == pytest.approx(detectable_delta(est.sd, 150))
    assert estimate_power([0.1], 0.02).cases_needed is None
