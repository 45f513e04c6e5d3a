"""Paired statistics verified against SciPy on fixed inputs."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from scipy import stats as sps

from ragaudit.stats.bootstrap import bootstrap_mean_ci
from ragaudit.stats.correction import holm_bonferroni
from ragaudit.stats.paired import paired_effect_size, paired_t_test, randomization_test, win_tie_loss
from ragaudit.stats.tdist import t_two_sided_p

RNG = np.random.default_rng(7)
A = RNG.uniform(0, 1, 40)
B = np.clip(A + RNG.normal(0.05, 0.1, 40), 0, 1)


@pytest.mark.parametrize(("t", "df"), [(0.1, 3), (1.7, 10), (2.5, 39), (-4.0, 7), (12.0, 100), (0.0, 5)])
def test_t_tail_matches_scipy(t: float, df: int) -> None:
    assert t_two_sided_p(t, df) == pytest.approx(2 * sps.t.sf(abs(t), df), rel=1e-9, abs=1e-15)


def test_paired_t_test_matches_scipy() -> None:
    ours = paired_t_test(A, B)
    ref = sps.ttest_rel(B, A)
    assert ours.statistic == pytest.approx(ref.statistic, rel=1e-12)
    assert ours.p_value == pytest.approx(ref.pvalue, rel=1e-9)
    assert ours.df == 39


def test_paired_t_test_degenerate_inputs() -> None:
    assert paired_t_test([0.5, 0.5], [0.5, 0.5]).p_value == 1.0
    assert paired_t_test([0.25, 0.5], [0.5, 0.75]).p_value == 0.0
    assert math.isnan(paired_t_test([0.1], [0.2]).p_value)
    with pytest.raises(ValueError, match="equal 1-d shapes"):
        paired_t_test([0.1, 0.2], [0.1])
    with pytest.raises(ValueError, match="finite"):
        paired_t_test([0.1, math.nan], [0.1, 0.2])


def _mean_diff(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.mean(y - x, axis=axis)


def test_exact_randomization_matches_scipy() -> None:
    a, b = A[:12], B[:12]
    ref = sps.permutation_test(
        (a, b),
        _mean_diff,
        permutation_type="samples",
        n_resamples=10**6,
        alternative="two-sided",
        vectorized=True,
    )
    assert randomization_test(a, b) == pytest.approx(ref.pvalue, rel=1e-12)


def test_monte_carlo_randomization_is_close_to_exact_and_seeded() -> None:
    a, b = A[:16], B[:16]
    exact = randomization_test(a, b)
    # force the Monte Carlo path on the same data by appending tied pairs is not possible (ties are dropped),
    # so compare a 40-query Monte Carlo estimate against SciPy's Monte Carlo with many resamples
    ours = randomization_test(A, B, n_resamples=20_000, seed=1)
    ref = sps.permutation_test(
        (A, B),
        _mean_diff,
        permutation_type="samples",
        n_resamples=20_000,
        alternative="two-sided",
        vectorized=True,
        rng=np.random.default_rng(2),
    ).pvalue
    assert abs(ours - ref) < 0.01
    assert randomization_test(A, B, n_resamples=5_000, seed=3) == randomization_test(
        A, B, n_resamples=5_000, seed=3
    )
    assert 0.0 < exact <= 1.0
    assert randomization_test(A, A) == 1.0


def test_bootstrap_ci_matches_scipy_percentile() -> None:
    d = B - A
    lo, hi = bootstrap_mean_ci(d, n_resamples=20_000, seed=0)
    ref = sps.bootstrap((d,), np.mean, n_resamples=20_000, method="percentile", rng=np.random.default_rng(5))
    assert lo == pytest.approx(ref.confidence_interval.low, abs=0.005)
    assert hi == pytest.approx(ref.confidence_interval.high, abs=0.005)
    assert lo < float(d.mean()) < hi
    assert bootstrap_mean_ci(d, seed=9) == bootstrap_mean_ci(d, seed=9)
    assert all(math.isnan(v) for v in bootstrap_mean_ci([]))
    with pytest.raises(ValueError, match="confidence"):
        bootstrap_mean_ci(d, confidence=1.5)


def test_holm_bonferroni() -> None:
    p = [0.01, 0.04, 0.03, math.nan, 0.5]
    # sorted 0.01, 0.03, 0.04, 0.5 with m = 4 -> 0.04, 0.09, 0.09 (monotone), 0.5
    assert holm_bonferroni(p)[:3] == pytest.approx([0.04, 0.09, 0.09])
    assert math.isnan(holm_bonferroni(p)[3])
    assert holm_bonferroni(p)[4] == pytest.approx(0.5)
    assert holm_bonferroni([]) == []


def test_effect_size_and_win_tie_loss() -> None:
    d = B - A
    assert paired_effect_size(A, B) == pytest.approx(d.mean() / d.std(ddof=1))
    wtl = win_tie_loss([0.1, 0.5, 0.5, 0.9], [0.2, 0.5, 0.4, 0.9])
    assert (wtl.wins, wtl.ties, wtl.losses) == (1, 2, 1)


# --- a delta's CI next to a Holm-adjusted p is adjusted for the same family -----------------------------


def _family(seed: int, metrics: int = 8) -> dict[str, Any]:
    """``compare_reports`` of a system against an all-zero baseline on ``metrics`` identical metrics
    (40 cases, per-case deltas ~ N(0.14, 0.4)): a family of ``metrics`` equally strong comparisons."""
    from ragaudit.evaluation.compare import LoadedReport, compare_reports

    d = np.round(np.random.default_rng(seed).normal(0.14, 0.4, 40), 3)
    names = [f"M{i}" for i in range(metrics)]

    def report(label: str, values: np.ndarray) -> LoadedReport:
        per_case = [{"id": f"q{i}", "metrics": dict.fromkeys(names, float(v))} for i, v in enumerate(values)]
        data = {"dataset": {"sha256": "s"}, "policy": {}, "metrics": dict.fromkeys(names, 0.0)}
        return LoadedReport(label, label, {**data, "per_case": per_case})

    base = report("base", np.zeros(40))
    return compare_reports([base, report("system", d)], base, n_resamples=4000)


def test_the_ci_beside_a_holm_p_is_a_bonferroni_interval_at_one_minus_alpha_over_m() -> None:
    result = _family(0)
    row = result["comparisons"][0]
    assert result["ci_level"] == row["ci_level"] == pytest.approx(1 - 0.05 / 8)
    assert result["ci_adjustment"] == "bonferroni" and "m = 8" in row["ci_method"]
    # unadjusted, this delta's 95% CI excludes 0 while its Holm p is not significant: the contradiction
    # the reports showed; at 1 - alpha/m the interval agrees with the adjusted p
    d = np.round(np.random.default_rng(0).normal(0.14, 0.4, 40), 3)
    assert bootstrap_mean_ci(d, 0.95, 4000)[0] > 0 and row["p_value"] < 0.05
    assert not row["significant"] and row["p_value_corrected"] > 0.05
    assert row["ci"][0] < 0 < row["ci"][1]
    strong = _family(6)["comparisons"][0]  # a significant Holm p: its adjusted CI excludes 0 too
    assert strong["significant"] and strong["ci"][0] > 0
    alone = _family(0, metrics=1)
    assert alone["ci_level"] == pytest.approx(0.95) and alone["ci_adjustment"] == "none"


def test_every_renderer_names_the_ci_level_beside_the_holm_p() -> None:
    from ragaudit.artifacts.tables import delta_ci_label
    from ragaudit.artifacts.tables import delta_ci_label as terminal_label
    from ragaudit.report.html import render_html
    from ragaudit.report.markdown import render_markdown
    from ragaudit.report.view import build_view

    rows = _family(0)["comparisons"]
    assert delta_ci_label(rows) == terminal_label(rows) == "99.38% CI of Δ (Bonferroni 1-α/m)"
    assert delta_ci_label([{"ci": [0, 1]}]) == "95% CI of Δ (unadjusted)"  # an older report says so
    report = {**_family(0), "kind": "compare"}
    text = render_markdown(build_view(report))
    assert "| 99.38% CI of Δ (Bonferroni 1-α/m) | p (Holm) |" in text
    assert '<th class="num">99.38% CI of Δ (Bonferroni 1-α/m)</th><th class="num">p (Holm)</th>' in (
        render_html(build_view(report))
    )
