"""How ``ragaudit fit-fusion`` divides its cases: the cross-validation folds (whole questions, dealt
tenant by tenant, round-robin over a seeded shuffle, so each fold holds its share of every tenant), the
check that there are enough questions for them, and the holdout set aside before fitting
(:func:`split_holdout`, ``fit-fusion --holdout FRACTION``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ragaudit.data.schema import Dataset, GoldenCase
from ragaudit.errors import InputError
from ragaudit.experiments.fusion_cases import CaseData
from ragaudit.text.words import normalize_text


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
