"""Fit fusion on a golden set, and estimate what it is worth by k-fold cross-validation only.

``ragaudit fit-fusion`` runs a ``hybrid`` first stage (one BM25 and one dense retriever) once per
answerable case and keeps, per case, the two retrievers' lists and the features
(:mod:`ragaudit.retrieval.fusion_features`) of the RRF list's top ``candidates``
(:mod:`ragaudit.experiments.fusion_cases`). Three ways to rank
them are then compared on held-out cases:

- ``rrf``: the first stage as it is (reciprocal-rank fusion, nothing fitted);
- ``convex``: ``(1 - w) · minmax(bm25) + w · minmax(dense)``, the dense weight ``w`` chosen on the
  training folds (:mod:`ragaudit.experiments.fusion_convex`);
- ``learned``: a linear pairwise model that reorders the candidates, its pair weighting (``uniform`` or
  ``lambda``) and L2 strength ``C`` chosen per training set by an inner cross-validation over the
  training cases only (nested: the held-out fold never takes part;
  :mod:`ragaudit.experiments.fusion_learned`).

**Folds.** The unit is the case: all candidates of a case are in the same fold, and cases asking the
same question (same tenant, same normalised query text) share a fold. Every case is retrieved with
its own tenant (a chunk of another tenant is dropped and counted, never a feature or a label), and the
folds are dealt tenant by tenant, round-robin over a seeded shuffle, so each fold holds its share of
every tenant. Each case is scored once, by the models fitted without it; the estimates are means over
those held-out scores, and each method is compared with ``rrf`` case by case (paired randomization
test, Holm-corrected over the methods and metrics). The folds and the holdout:
:mod:`ragaudit.experiments.fusion_folds`.

**Holdout.** With ``holdout`` (``fit-fusion --holdout FRACTION``) :func:`split_holdout` first sets a
share of the questions aside (whole groups, tenant by tenant, seeded): the model never sees them, and
``fit-fusion`` writes them as a golden JSONL file to score the model on. The model records the ids and
fingerprints of the cases it was fitted on (``fitted_on.cases``), so a report on any of them is
marked IN-SAMPLE (:mod:`ragaudit.artifacts.in_sample`).

The model written is fitted on every case (every case not held out), with its objective and ``C`` chosen by a cross-validation
over every case and the convex weight chosen on every case; its
cross-validated estimates are written into the file with it. Only those are reported: a model's fit on
the cases it was fitted on says nothing about new queries. What the file records:
:mod:`ragaudit.experiments.fusion_result`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ragaudit.corpus.loading import Corpus
from ragaudit.data.schema import Dataset
from ragaudit.errors import InputError
from ragaudit.experiments.fusion_cases import (
    CaseData,
    Collected,
    FloatArray,
    collect,
    question_of,
    score_rankings,
)
from ragaudit.experiments.fusion_convex import CONVEX_GRID, convex_ranking, convex_weights, pick_weight
from ragaudit.experiments.fusion_folds import assign_folds, check_folds, split_holdout
from ragaudit.experiments.fusion_learned import (
    C_VALUES,
    INNER_FOLDS,
    MAX_PAIRS_PER_CASE,
    OBJECTIVES,
    Setting,
    choose_setting,
    fit_linear,
    learned_ranking,
    pair_weights,
    settings_grid,
    sklearn_logistic,
    sklearn_version,
)
from ragaudit.experiments.fusion_result import FitResult, recorded_model
from ragaudit.metrics.names import MetricSpec
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.config import PipelineConfig
from ragaudit.stats.correction import holm_bonferroni
from ragaudit.stats.paired import randomization_test

__all__ = [
    "CONVEX_GRID",
    "C_VALUES",
    "INNER_FOLDS",
    "MAX_PAIRS_PER_CASE",
    "METHODS",
    "OBJECTIVES",
    "CaseData",
    "Collected",
    "FitResult",
    "FloatArray",
    "Setting",
    "assign_folds",
    "check_folds",
    "choose_setting",
    "collect",
    "compare_methods",
    "convex_ranking",
    "convex_weights",
    "cross_validate",
    "first_stage",
    "fit_fusion",
    "fit_linear",
    "learned_ranking",
    "pair_weights",
    "pick_weight",
    "score_rankings",
    "settings_grid",
    "sklearn_logistic",
    "sklearn_version",
    "split_holdout",
]

METHODS = ("rrf", "convex", "learned")


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
        weight = pick_weight(weight_table, train)
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
    weight = pick_weight(weight_table, range(len(cases)))
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
    questions = {question_of(c, default_tenant) for c in answerable}
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
    result.model = recorded_model(
        result,
        collected,
        settings_grid(objectives, c_values),
        {
            "dataset": dataset.info(),
            "corpus": corpus.info(),
            "pipeline": prepared.pipeline.info(),
            "cases": fitted_cases(c.case for c in collected.cases),
            **({"holdout": dict(holdout)} if holdout is not None else {}),
        },
    )
    return result
