"""The learned fusion model as ``ragaudit fit-fusion`` fits it: a linear pairwise model (scikit-learn
``LogisticRegression`` on the feature differences of candidate pairs with different grades, features
standardised, no intercept) that reorders the RRF list's top candidates; the rest of the list follows.
Each case's pairs weigh 1 in total (every query counts the same), spread evenly over its pairs
(``uniform``) or in proportion to what swapping the two would change in DCG at their RRF positions
(``lambda``, as LambdaRank weighs pairs). The objective and the L2 strength ``C`` are chosen by an
inner cross-validation over the training cases only (:func:`choose_setting`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ragaudit.errors import MissingDependencyError
from ragaudit.experiments.fusion_cases import CaseData, FloatArray, score_rankings
from ragaudit.experiments.fusion_folds import assign_folds
from ragaudit.metrics.names import MetricSpec
from ragaudit.metrics.policy import Policy
from ragaudit.retrieval.learned_fusion import FusionModel

MAX_PAIRS_PER_CASE = 2_000


OBJECTIVES = ("uniform", "lambda")


C_VALUES = (0.1, 1.0)


INNER_FOLDS = 4


@dataclass(frozen=True)
class Setting:
    """What the inner cross-validation chooses for the learned model: pair weighting and L2 strength."""

    objective: str
    c: float

    def to_json(self) -> dict[str, Any]:
        return {"objective": self.objective, "C": self.c}


def settings_grid(objectives: Sequence[str], c_values: Sequence[float]) -> list[Setting]:
    """Every (objective, C) pair, in the order given; a ValueError on an unknown objective or C <= 0."""
    bad = [o for o in objectives if o not in OBJECTIVES]
    if bad or not objectives:
        raise ValueError(f"unknown objective(s) {bad}; use {', '.join(OBJECTIVES)}")
    if not c_values or any(not c > 0 for c in c_values):
        raise ValueError("every C must be > 0")
    return [Setting(o, float(c)) for o in objectives for c in c_values]


def sklearn_logistic() -> Any:
    try:
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        raise MissingDependencyError("scikit-learn", "fusion") from None
    return LogisticRegression


def sklearn_version() -> str:
    import sklearn

    return str(sklearn.__version__)


def pair_weights(grades: FloatArray, better: Any, worse: Any, objective: str, gain: str) -> FloatArray:
    """Each pair's weight before the per-case normalisation: 1 (``uniform``), or ``|ΔG| · |Δ 1/log2(1 + r)|``
    at the candidates' RRF positions ``r`` (``lambda``; ``G`` the grade, or ``2^grade - 1`` with
    exponential gain)."""
    if objective == "uniform":
        return np.ones(len(better))
    gains = 2.0**grades - 1.0 if gain == "exponential" else grades
    discount = 1.0 / np.log2(np.arange(2, len(grades) + 2, dtype=np.float64))
    return np.asarray(
        np.abs(gains[better] - gains[worse]) * np.abs(discount[better] - discount[worse]), dtype=np.float64
    )


def fit_linear(
    cases: Sequence[CaseData],
    candidates: int,
    c_value: float,
    seed: int,
    objective: str = "uniform",
    gain: str = "exponential",
) -> FusionModel | None:
    """A pairwise logistic model over ``cases`` (module docstring); ``None`` when no case has two
    candidates of different grades."""
    with_candidates = [c.features for c in cases if len(c.features)]
    if not with_candidates:
        return None
    rows = np.vstack(with_candidates)
    mean = rows.mean(axis=0)
    scale = rows.std(axis=0)
    scale[scale < 1e-12] = 1.0
    rng = np.random.default_rng(seed)
    diffs: list[FloatArray] = []
    weights: list[FloatArray] = []
    for c in cases:
        standard = (c.features - mean) / scale
        better, worse = np.nonzero(c.grades[:, None] > c.grades[None, :])
        if better.size > MAX_PAIRS_PER_CASE:
            keep = rng.choice(better.size, MAX_PAIRS_PER_CASE, replace=False)
            better, worse = better[keep], worse[keep]
        if better.size:
            w = pair_weights(c.grades, better, worse, objective, gain)
            if w.sum() > 0:
                diffs.append(standard[better] - standard[worse])
                weights.append(w / w.sum())  # every case weighs the same
    if not diffs:
        return None
    d = np.vstack(diffs)
    w = np.concatenate(weights)
    w = w * (len(w) / w.sum())  # mean pair weight 1, so C means what it means unweighted
    x = np.vstack([d, -d])
    y = np.concatenate([np.ones(len(d)), np.zeros(len(d))])
    model = sklearn_logistic()(C=c_value, fit_intercept=False, max_iter=2_000)
    from threadpoolctl import threadpool_limits  # a scikit-learn dependency

    with threadpool_limits(1):  # 17 columns: BLAS threads only contend (~25% faster on 2 busy cores)
        model.fit(x, y, sample_weight=np.concatenate([w, w]))
    coefficients = tuple(float(v) for v in model.coef_[0])
    return FusionModel(
        coefficients, tuple(float(m) for m in mean), tuple(float(s) for s in scale), candidates=candidates
    )


def choose_setting(
    cases: Sequence[CaseData],
    grid: Sequence[Setting],
    primary: MetricSpec,
    policy: Policy,
    *,
    candidates: int,
    seed: int,
) -> tuple[Setting, dict[str, float]]:
    """The setting of ``grid`` whose models, fitted by an inner k-fold cross-validation over ``cases``
    only, give the best mean ``primary`` on them (ties: the first in ``grid``); and each setting's mean.

    A single setting, or too few distinct questions for 2 inner folds, gives ``grid[0]`` untested."""
    groups = len({c.group for c in cases})
    inner = min(INNER_FOLDS, groups // 2)
    if len(grid) == 1 or inner < 2:
        return grid[0], {}
    fold_of = assign_folds(cases, inner, seed + 1)
    means: dict[str, float] = {}
    best: tuple[float, Setting] | None = None
    for setting in grid:
        rankings: list[list[str]] = [[] for _ in cases]
        for f in range(inner):
            train = [c for c, k in zip(cases, fold_of, strict=True) if k != f]
            model = fit_linear(train, candidates, setting.c, seed, setting.objective, policy.gain)
            for i, k in enumerate(fold_of):
                if k == f:
                    rankings[i] = learned_ranking(cases[i], model) if model else list(cases[i].rrf)
        value = float(score_rankings(cases, rankings, [primary], policy)[primary.name].mean())
        means[f"{setting.objective} C={setting.c:g}"] = value
        if best is None or value > best[0] + 1e-12:
            best = (value, setting)
    assert best is not None
    return best[1], means


def learned_ranking(c: CaseData, model: FusionModel) -> list[str]:
    """The candidates by model score (stable: ties keep RRF order), then the rest of the RRF list."""
    n = len(c.features)
    if n == 0:
        return list(c.rrf)
    scores = model.score(c.features)
    order = sorted(range(n), key=lambda i: -scores[i])
    head = [c.rrf[i] for i in order]
    return head + c.rrf[n:]
