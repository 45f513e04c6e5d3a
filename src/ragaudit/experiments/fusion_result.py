"""What ``ragaudit fit-fusion`` gives back (:class:`FitResult`: the cross-validated estimates, the fold
plan and the model fitted on every case) and what the model file records beside the model's weights:
the trainer and the setting chosen, what it was fitted on (dataset, corpus, pipeline, the cases'
ids and fingerprints, the holdout), the convex weight, and the cross-validated estimates."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ragaudit.experiments.fusion_cases import Collected
from ragaudit.experiments.fusion_convex import convex_weights
from ragaudit.experiments.fusion_learned import Setting, sklearn_version
from ragaudit.retrieval.learned_fusion import FusionModel


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
    setting: Setting = Setting("uniform", 1.0)  # noqa: RUF009 (a frozen dataclass: one shared default is safe)
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


def recorded_model(
    result: FitResult,
    collected: Collected,
    grid: Sequence[Setting],
    fitted_on: Mapping[str, Any],
) -> FusionModel:
    """The model fitted on every case with what its file records: the trainer (the setting chosen from
    ``grid`` and the inner cross-validation's means), ``fitted_on``, the convex weight, and the
    cross-validated estimates (:meth:`FitResult.summary`)."""
    return FusionModel(
        result.model.weights,
        result.model.mean,
        result.model.scale,
        candidates=result.candidates,
        info={
            "trainer": {
                "library": f"scikit-learn {sklearn_version()}",
                "model": "pairwise logistic",
                "objective": result.setting.objective,
                "C": result.setting.c,
                "chosen_from": [s.to_json() for s in grid],
                "inner_cv_means": result.setting_means,
            },
            "fitted_on": dict(fitted_on),
            "convex": {
                "dense_weight": result.convex_weight,
                "normalize": "minmax",
                "weights": convex_weights(result.convex_weight, collected.components),
            },
            "cross_validation": result.summary(),
        },
    )
