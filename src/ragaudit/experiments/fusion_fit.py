"""Fit fusion on a golden set, and estimate what it is worth by k-fold cross-validation only.

``ragaudit fit-fusion`` runs a ``hybrid`` first stage (one BM25 and one dense retriever) once per
answerable case and keeps, per case, the two retrievers' lists and the features
(:mod:`ragaudit.retrieval.fusion_features`) of the RRF list's top ``candidates``. Three ways to rank
them are then compared on held-out cases:

- ``rrf``: the first stage as it is (reciprocal-rank fusion, nothing fitted);
- ``convex``: ``(1 - w) · minmax(bm25) + w · minmax(dense)`` (``method = "weighted"``), with the dense
  weight ``w`` chosen from 0, 0.1, ..., 1 by the first metric's mean on the training folds (ties: the
  ``w`` nearest 0.5);
- ``learned``: a linear pairwise model (scikit-learn ``LogisticRegression`` on the feature differences
  of candidate pairs with different grades, features standardised, no intercept) that reorders the
  candidates; the rest of the RRF list follows. Each case's pairs weigh 1 in total (every query
  counts the same), spread evenly over its pairs (``uniform``) or in proportion to what swapping the
  two would change in DCG at their RRF positions (``lambda``, as LambdaRank weighs pairs). The
  objective and the L2 strength ``C`` are chosen per training set by an inner cross-validation over
  the training cases only (nested: the held-out fold never takes part), by the first metric's mean.

**Folds.** The unit is the case: all candidates of a case are in the same fold, and cases asking the
same question (same tenant, same normalised query text) share a fold. Every case is retrieved with
its own tenant (a chunk of another tenant is dropped and counted, never a feature or a label), and the
folds are dealt tenant by tenant, round-robin over a seeded shuffle, so each fold holds its share of
every tenant. Each case is scored once, by the models fitted without it; the estimates are means over
those held-out scores, and each method is compared with ``rrf`` case by case (paired randomization
test, Holm-corrected over the methods and metrics).

**Holdout.** With ``holdout`` (``fit-fusion --holdout FRACTION``) :func:`split_holdout` first sets a
share of the questions aside (whole groups, tenant by tenant, seeded): the model never sees them, and
``fit-fusion`` writes them as a golden JSONL file to score the model on. The model records the ids and
fingerprints of the cases it was fitted on (``fitted_on.cases``), so a report on any of them is
marked IN-SAMPLE (:mod:`ragaudit.artifacts.in_sample`).

The model written is fitted on every case (every case not held out), with its objective and ``C`` chosen by a cross-validation
over every case and the convex weight chosen on every case; its
cross-validated estimates are written into the file with it. Only those are reported: a model's fit on
the cases it was fitted on says nothing about new queries.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from ragaudit.corpus.loading import Corpus
from ragaudit.data.schema import Dataset, GoldenCase
from ragaudit.errors import InputError, MissingDependencyError
from ragaudit.metrics.bulk import compute_rankings
from ragaudit.metrics.names import MetricSpec
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.config import PipelineConfig
from ragaudit.retrieval.fusion import weighted_fuse
from ragaudit.retrieval.fusion_features import FEATURES, candidate_features
from ragaudit.retrieval.learned_fusion import FusionModel, dense_encoder, hybrid_components
from ragaudit.retrieval.rerank import candidate
from ragaudit.stats.correction import holm_bonferroni
from ragaudit.stats.paired import randomization_test
from ragaudit.text.words import normalize_text

FloatArray = npt.NDArray[np.float64]
METHODS = ("rrf", "convex", "learned")
CONVEX_GRID = tuple(round(0.1 * i, 1) for i in range(11))
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


@dataclass
class CaseData:
    """One answerable case's first-stage evidence."""

    case: GoldenCase
    group: str
    features: FloatArray
    """Features of the RRF list's top ``candidates`` (rows in RRF order)."""
    grades: FloatArray
    """The grade of each of those candidates (0 when unjudged)."""
    rrf: list[str]
    """The RRF ranking, ``depth`` deep."""
    lists: tuple[list[tuple[str, float | None]], list[tuple[str, float | None]]]
    """BM25's and the dense retriever's lists, for convex fusion."""


@dataclass
class Collected:
    cases: list[CaseData]
    components: tuple[int, int]
    absent_rank: int
    foreign_dropped: int


@dataclass
class FitResult:
    """Cross-validated estimates, the fold plan, and the model fitted on every case."""

    metrics: list[str]
    per_case: dict[str, dict[str, list[float]]]
    """``{method: {metric: held-out value per case}}``, cases in :attr:`case_ids` order."""
    case_ids: list[str]
    comparisons: list[dict[str, Any]]
    folds: list[dict[str, Any]]
    model: FusionModel
    convex_weight: float
    candidates: int
    info: dict[str, Any] = field(default_factory=dict)
    setting: Setting = Setting("uniform", 1.0)
    """The objective and ``C`` of the model fitted on every case (chosen by cross-validation over them)."""
    setting_means: dict[str, float] = field(default_factory=dict)
    """That cross-validation's mean first metric per setting (empty when there was nothing to choose)."""

    def means(self) -> dict[str, dict[str, float]]:
        return {m: {k: float(np.mean(v)) for k, v in by.items()} for m, by in self.per_case.items()}

    def summary(self) -> dict[str, Any]:
        """What the model file records about its estimates."""
        return {
            "folds": len(self.folds),
            "cases": len(self.case_ids),
            "metrics": self.metrics,
            "means": self.means(),
            "comparisons": self.comparisons,
            "fold_plan": self.folds,
            **self.info,
        }


def _sklearn_logistic() -> Any:
    try:
        from sklearn.linear_model import LogisticRegression
    except ImportError:
        raise MissingDependencyError("scikit-learn", "fusion") from None
    return LogisticRegression


def sklearn_version() -> str:
    import sklearn

    return str(sklearn.__version__)


async def collect(
    dataset: Dataset,
    retriever: Any,
    *,
    candidates: int,
    depth: int,
    default_tenant: str | None,
    threshold: int,
) -> Collected:
    """Run the hybrid's sub-retrievers once per answerable case and keep what fusion needs."""
    components, hybrid_depth = hybrid_components(retriever)
    encoder = dense_encoder(retriever)
    absent_rank = hybrid_depth + 1
    want = max(depth, candidates, hybrid_depth)
    dropped = 0
    retrieved: list[tuple[GoldenCase, str, list[Any], tuple[list[Any], list[Any]]]] = []
    for case in dataset.cases:
        if not case.is_answerable(threshold):
            continue
        tenant = case.tenant_id or default_tenant
        if not tenant:
            raise InputError(
                dataset.path, case.line, f"case {case.id!r} has no tenant_id", "pass --tenant NAME"
            )
        raw = await asyncio.gather(
            *(r.search(tenant_id=tenant, query=case.query, top_k=want) for r in retriever.retrievers)
        )
        kept = [[c for c in results if c.get("tenant_id", tenant) == tenant] for results in raw]
        dropped += sum(len(a) - len(b) for a, b in zip(raw, kept, strict=True))
        lists = tuple([(c["chunk_id"], c.get("score")) for c in kept[p]] for p in components)
        retrieved.append((case, tenant, retriever.fuse_results(kept, want), (lists[0], lists[1])))
    # the queries and titles in one batch: the embedding cache then writes once, not once per case
    views = [
        [candidate(c, i) for i, c in enumerate(fused[:candidates], start=1)] for _, _, fused, _ in retrieved
    ]
    encoder.encode(
        sorted(
            {case.query for case, *_ in retrieved}
            | {v.title for row in views for v in row if v.title.strip()}
        )
    )
    out: list[CaseData] = []
    for (case, tenant, fused, lists), row in zip(retrieved, views, strict=True):
        grades = case.grades()
        out.append(
            CaseData(
                case,
                f"{tenant}\x00{normalize_text(case.query)}",
                candidate_features(case.query, row, components, absent_rank, encoder, FEATURES),
                np.array([float(max(grades.get(c["chunk_id"], 0), 0)) for c in fused[:candidates]]),
                [c["chunk_id"] for c in fused[:depth]],
                lists,
            )
        )
    return Collected(out, components, absent_rank, dropped)


def assign_folds(cases: Sequence[CaseData], folds: int, seed: int) -> list[int]:
    """The fold of each case: groups dealt round-robin, tenant by tenant, after a seeded shuffle."""
    rng = np.random.default_rng(seed)
    by_tenant: dict[str, list[str]] = {}
    for c in cases:
        tenant = c.group.split("\x00", 1)[0]
        groups = by_tenant.setdefault(tenant, [])
        if c.group not in groups:
            groups.append(c.group)
    fold_of: dict[str, int] = {}
    counter = 0
    for tenant in sorted(by_tenant):
        groups = by_tenant[tenant]
        for i in rng.permutation(len(groups)):
            fold_of[groups[int(i)]] = counter % folds
            counter += 1
    return [fold_of[c.group] for c in cases]


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
    model = _sklearn_logistic()(C=c_value, fit_intercept=False, max_iter=2_000)
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


def convex_ranking(c: CaseData, weight: float, depth: int) -> list[str]:
    fused = weighted_fuse(list(c.lists), [1.0 - weight, weight], "minmax")
    return [chunk_id for chunk_id, _ in fused[:depth]]


def score_rankings(
    cases: Sequence[CaseData], rankings: Sequence[list[str]], specs: Sequence[MetricSpec], policy: Policy
) -> dict[str, FloatArray]:
    threshold = policy.relevance_threshold
    return compute_rankings(
        rankings,
        [c.case.relevant_set(threshold) for c in cases],
        [c.case.grades() for c in cases],
        specs,
        policy.gain,
    )


def _pick_weight(table: FloatArray, rows: Sequence[int]) -> float:
    """The grid weight with the best mean over ``rows`` of ``table`` (cases x weights); ties nearest 0.5."""
    means = table[list(rows)].mean(axis=0)
    best = float(means.max())
    tied = [w for w, m in zip(CONVEX_GRID, means, strict=True) if m >= best - 1e-12]
    return min(tied, key=lambda w: (abs(w - 0.5), w))


def cross_validate(
    collected: Collected,
    specs: Sequence[MetricSpec],
    policy: Policy,
    *,
    folds: int,
    candidates: int,
    depth: int,
    objectives: Sequence[str] = OBJECTIVES,
    c_values: Sequence[float] = C_VALUES,
    seed: int = 0,
    resamples: int = 10_000,
) -> FitResult:
    """Held-out estimates of rrf, convex and learned, and the final model (see the module docstring)."""
    grid = settings_grid(objectives, c_values)
    cases = collected.cases
    check_folds(len(cases), len({c.group for c in cases}), folds)
    names = [s.name for s in specs]
    primary = specs[0]
    fold_of = assign_folds(cases, folds, seed)
    weight_table = np.column_stack(
        [
            score_rankings(cases, [convex_ranking(c, w, depth) for c in cases], [primary], policy)[
                primary.name
            ]
            for w in CONVEX_GRID
        ]
    )
    rankings: dict[str, list[list[str]]] = {m: [[] for _ in cases] for m in METHODS}
    plan: list[dict[str, Any]] = []
    for f in range(folds):
        test = [i for i, k in enumerate(fold_of) if k == f]
        train = [i for i, k in enumerate(fold_of) if k != f]
        weight = _pick_weight(weight_table, train)
        training = [cases[i] for i in train]
        setting, _ = choose_setting(training, grid, primary, policy, candidates=candidates, seed=seed)
        model = fit_linear(training, candidates, setting.c, seed, setting.objective, policy.gain)
        if model is None:
            raise InputError(
                "--dataset",
                None,
                f"fold {f + 1}: no training case has a relevant candidate in the first stage's top {candidates}",
                "label more cases, or raise --candidates",
            )
        for i in test:
            rankings["rrf"][i] = cases[i].rrf
            rankings["convex"][i] = convex_ranking(cases[i], weight, depth)
            rankings["learned"][i] = learned_ranking(cases[i], model)
        plan.append(
            {"fold": f + 1, "cases": len(test), "convex_dense_weight": weight, "learned": setting.to_json()}
        )
    per_case = {
        m: {k: v.tolist() for k, v in score_rankings(cases, rankings[m], specs, policy).items()}
        for m in METHODS
    }
    comparisons = compare_methods(per_case, names, resamples, seed)
    chosen, inner_means = choose_setting(cases, grid, primary, policy, candidates=candidates, seed=seed)
    final = fit_linear(cases, candidates, chosen.c, seed, chosen.objective, policy.gain)
    if final is None:  # pragma: no cover - every fold had pairs, so all cases together have them
        raise InputError("--dataset", None, "no case has a relevant candidate", "label more cases")
    weight = _pick_weight(weight_table, range(len(cases)))
    return FitResult(
        names,
        per_case,
        [c.case.id for c in cases],
        comparisons,
        plan,
        final,
        weight,
        candidates,
        setting=chosen,
        setting_means=inner_means,
    )


def split_holdout(
    dataset: Dataset, fraction: float, seed: int = 0, default_tenant: str | None = None
) -> tuple[Dataset, Dataset]:
    """``(fit, held_out)``: ``dataset`` split by question (cases with the same tenant and normalised
    query stay together), about ``fraction`` of each tenant's questions held out after a seeded shuffle."""
    from dataclasses import replace

    if not 0 < fraction < 1:
        raise InputError(
            "--holdout", None, f"must be strictly between 0 and 1 (got {fraction})", "--holdout 0.3"
        )

    def key(case: GoldenCase) -> tuple[str, str]:
        return (case.tenant_id or default_tenant or "", normalize_text(case.query))

    by_tenant: dict[str, list[tuple[str, str]]] = {}
    for case in dataset.cases:
        groups = by_tenant.setdefault(key(case)[0], [])
        if key(case) not in groups:
            groups.append(key(case))
    rng = np.random.default_rng(seed)
    held: set[tuple[str, str]] = set()
    for tenant in sorted(by_tenant):
        groups = by_tenant[tenant]
        held.update(groups[int(i)] for i in rng.permutation(len(groups))[: round(fraction * len(groups))])
    total = sum(len(g) for g in by_tenant.values())
    if not held or len(held) == total:
        raise InputError(
            "--holdout",
            None,
            f"holding out {fraction} of {total} distinct question(s) leaves "
            + ("nothing held out" if not held else "nothing to fit on"),
            "choose a fraction that keeps questions on both sides, e.g. --holdout 0.3",
        )
    fit = tuple(c for c in dataset.cases if key(c) not in held)
    out = tuple(c for c in dataset.cases if key(c) in held)
    return replace(dataset, cases=fit), replace(dataset, cases=out)


def check_folds(cases: int, groups: int, folds: int) -> None:
    """An InputError unless there are at least 2 folds and 2 distinct questions per fold."""
    if folds < 2:
        raise InputError(
            "--folds", None, f"cross-validation needs at least 2 folds (got {folds})", "--folds 5"
        )
    if groups < 2 * folds:
        raise InputError(
            "--dataset",
            None,
            f"{cases} answerable case(s) ({groups} distinct questions) are too few for {folds} folds",
            f"need at least {2 * folds} distinct questions: label more cases or lower --folds",
        )


def compare_methods(
    per_case: Mapping[str, Mapping[str, Sequence[float]]], metrics: Sequence[str], resamples: int, seed: int
) -> list[dict[str, Any]]:
    """Every method but ``rrf`` against ``rrf`` per metric: mean difference, paired randomization p, Holm."""
    rows: list[dict[str, Any]] = []
    for method in METHODS[1:]:
        for metric in metrics:
            base, mine = np.asarray(per_case["rrf"][metric]), np.asarray(per_case[method][metric])
            rows.append(
                {
                    "method": method,
                    "metric": metric,
                    "baseline": "rrf",
                    "delta": float(np.mean(mine - base)),
                    "wins": int(np.sum(mine > base)),
                    "losses": int(np.sum(mine < base)),
                    "p_value": randomization_test(base, mine, n_resamples=resamples, seed=seed),
                }
            )
    for row, corrected in zip(rows, holm_bonferroni([r["p_value"] for r in rows]), strict=True):
        row["p_value_holm"] = corrected
    return rows


def convex_weights(dense_weight: float, components: tuple[int, int]) -> list[float]:
    """``[retriever] weights`` for a dense weight, in the hybrid's component order (bm25 at
    ``components[0]``, dense at ``components[1]``)."""
    weights = [0.0, 0.0]
    weights[components[0]] = round(1.0 - dense_weight, 2)
    weights[components[1]] = dense_weight
    return weights


def first_stage(config: PipelineConfig) -> PipelineConfig:
    """``config`` as the first stage to fit over: its ``[rerank]`` is dropped; a ``[rewrite]`` is refused."""
    from dataclasses import replace

    if config.rewrite is not None:
        raise InputError(
            "--pipeline",
            None,
            "fit-fusion fits over a hybrid first stage without [rewrite]",
            "remove [rewrite]",
        )
    if config.retriever.type != "hybrid":
        raise InputError(
            "--pipeline",
            None,
            f"fit-fusion needs a hybrid first stage of bm25 and dense (got {config.retriever.type!r})",
            "use --pipeline hybrid, or a TOML whose [retriever] is a bm25 + dense hybrid",
        )
    return replace(config, rerank=None)


async def fit_fusion(
    dataset: Dataset,
    corpus: Corpus,
    config: PipelineConfig,
    specs: Sequence[MetricSpec],
    policy: Policy,
    *,
    folds: int = 5,
    candidates: int = 100,
    depth: int = 100,
    objectives: Sequence[str] = OBJECTIVES,
    c_values: Sequence[float] = C_VALUES,
    seed: int = 0,
    resamples: int = 10_000,
    default_tenant: str | None = None,
    holdout: Mapping[str, Any] | None = None,
) -> FitResult:
    """Build the first stage over ``corpus``, collect, cross-validate, fit on all (module docstring).

    ``dataset`` is what it is fitted on (the fit part of :func:`split_holdout`); ``holdout`` describes
    the part set aside (recorded in ``fitted_on.holdout``)."""
    from ragaudit.artifacts.in_sample import fitted_cases
    from ragaudit.pipelines.prepare import prepare_pipeline

    base = first_stage(config)
    answerable = [c for c in dataset.cases if c.is_answerable(policy.relevance_threshold)]
    questions = {(c.tenant_id or default_tenant, normalize_text(c.query)) for c in answerable}
    check_folds(len(answerable), len(questions), folds)
    prepared = prepare_pipeline(dataset, corpus, base, threshold=policy.relevance_threshold)
    collected = await collect(
        prepared.dataset,
        prepared.pipeline.retriever,
        candidates=candidates,
        depth=depth,
        default_tenant=default_tenant,
        threshold=policy.relevance_threshold,
    )
    result = cross_validate(
        collected,
        specs,
        policy,
        folds=folds,
        candidates=candidates,
        depth=depth,
        objectives=objectives,
        c_values=c_values,
        seed=seed,
        resamples=resamples,
    )
    result.info = {
        "seed": seed,
        "candidates": candidates,
        "depth": depth,
        "gain": policy.gain,
        "foreign_chunks_dropped": collected.foreign_dropped,
        "skipped_unanswerable": len(dataset.cases) - len(collected.cases),
    }
    result.model = FusionModel(
        result.model.weights,
        result.model.mean,
        result.model.scale,
        candidates=candidates,
        info={
            "trainer": {
                "library": f"scikit-learn {sklearn_version()}",
                "model": "pairwise logistic",
                "objective": result.setting.objective,
                "C": result.setting.c,
                "chosen_from": [s.to_json() for s in settings_grid(objectives, c_values)],
                "inner_cv_means": result.setting_means,
            },
            "fitted_on": {
                "dataset": dataset.info(),
                "corpus": corpus.info(),
                "pipeline": prepared.pipeline.info(),
                "cases": fitted_cases(c.case for c in collected.cases),
                **({"holdout": dict(holdout)} if holdout is not None else {}),
            },
            "convex": {
                "dense_weight": result.convex_weight,
                "normalize": "minmax",
                "weights": convex_weights(result.convex_weight, collected.components),
            },
            "cross_validation": result.summary(),
        },
    )
    return result
