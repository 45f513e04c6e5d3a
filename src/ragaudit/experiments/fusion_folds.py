"""How ``ragaudit fit-fusion`` divides its cases: the cross-validation folds (whole questions, dealt
tenant by tenant, round-robin over a seeded shuffle, so each fold holds its share of every tenant), the
check that there are enough questions for them, and the holdout set aside before fitting
(:func:`split_holdout`, ``fit-fusion --holdout FRACTION``)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeVar

import numpy as np

from ragaudit.data.schema import Dataset
from ragaudit.errors import InputError
from ragaudit.experiments.fusion_cases import CaseData, question_of

Q = TypeVar("Q")


def shuffled_by_tenant(questions: Iterable[tuple[str, Q]], seed: int) -> list[list[Q]]:
    """Each tenant's distinct questions (``(tenant, question)`` pairs, first seen first) in a seeded
    shuffled order, one list per tenant in sorted tenant order: how folds are dealt and the holdout
    is drawn, so each holds its share of every tenant."""
    by_tenant: dict[str, dict[Q, None]] = {}
    for tenant, question in questions:
        by_tenant.setdefault(tenant, {})[question] = None
    rng = np.random.default_rng(seed)
    shuffled: list[list[Q]] = []
    for tenant in sorted(by_tenant):
        groups = list(by_tenant[tenant])
        shuffled.append([groups[int(i)] for i in rng.permutation(len(groups))])
    return shuffled


def assign_folds(cases: Sequence[CaseData], folds: int, seed: int) -> list[int]:
    """The fold of each case: groups dealt round-robin, tenant by tenant, after a seeded shuffle."""
    order = shuffled_by_tenant(((c.group.split("\x00", 1)[0], c.group) for c in cases), seed)
    fold_of = {group: i % folds for i, group in enumerate(g for groups in order for g in groups)}
    return [fold_of[c.group] for c in cases]


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

    questions = [question_of(c, default_tenant) for c in dataset.cases]
    order = shuffled_by_tenant(((q[0], q) for q in questions), seed)
    held = {g for groups in order for g in groups[: round(fraction * len(groups))]}
    total = sum(len(groups) for groups in order)
    if not held or len(held) == total:
        raise InputError(
            "--holdout",
            None,
            f"holding out {fraction} of {total} distinct question(s) leaves "
            + ("nothing held out" if not held else "nothing to fit on"),
            "choose a fraction that keeps questions on both sides, e.g. --holdout 0.3",
        )
    fit = tuple(c for c, q in zip(dataset.cases, questions, strict=True) if q not in held)
    out = tuple(c for c, q in zip(dataset.cases, questions, strict=True) if q in held)
    return replace(dataset, cases=fit), replace(dataset, cases=out)
