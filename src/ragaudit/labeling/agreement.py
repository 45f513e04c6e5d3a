"""Agreement between annotators' judgments files, overall and per tenant, and their disagreements.

A unit is one (case, candidate) pair; its values are the grades in effect of every annotator who
judged it. Reported: Krippendorff's alpha (ordinal, any number of annotators, missing grades allowed),
weighted Cohen's kappa for every pair of annotators (on the units both judged), and every unit whose
grades differ, most spread first (the adjudication list). Cases one annotator marks unanswerable and
another does not are listed too. Formulas: :mod:`ragaudit.stats.agreement`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from ragaudit.labeling.judgments import AnnotatorLabels
from ragaudit.stats.agreement import Weights, krippendorff_alpha_ordinal, weighted_kappa


def _units(labels: Sequence[AnnotatorLabels]) -> dict[tuple[str, str], tuple[str | None, list[int | None]]]:
    keys = sorted({pair for a in labels for pair in a.state.grades})
    units: dict[tuple[str, str], tuple[str | None, list[int | None]]] = {}
    for pair in keys:
        tenant: str | None = None
        values: list[int | None] = []
        for a in labels:
            event = a.state.grades.get(pair)
            values.append(None if event is None else int(event["grade"]))
            tenant = tenant or (event.get("tenant_id") if event is not None else None)
        units[pair] = (tenant, values)
    return units


def _figures(names: Sequence[str], values: Sequence[list[int | None]], weights: Weights) -> dict[str, Any]:
    pairable = [v for v in values if sum(x is not None for x in v) >= 2]
    kappas = []
    for i, j in combinations(range(len(names)), 2):
        first: list[int] = []
        second: list[int] = []
        for v in values:
            a, b = v[i], v[j]
            if a is not None and b is not None:
                first.append(a)
                second.append(b)
        kappa = weighted_kappa(first, second, weights) if first else math.nan
        kappas.append({"annotators": [names[i], names[j]], "items": len(first), "kappa": _num(kappa)})
    return {
        "units": len(values),
        "pairable_units": len(pairable),
        "alpha_ordinal": _num(krippendorff_alpha_ordinal(values)),
        "kappa": kappas,
    }


def _num(value: float) -> float | None:
    return None if math.isnan(value) else value


def model_agreement(
    labels: Sequence[AnnotatorLabels],
    suggested: Mapping[tuple[str, str], int],
    weights: Weights = "quadratic",
) -> list[dict[str, Any]]:
    """Weighted kappa of a model's suggested grades against each annotator, on the pairs both graded."""
    out = []
    for a in labels:
        pairs = [(g, int(a.state.grades[k]["grade"])) for k, g in suggested.items() if k in a.state.grades]
        kappa = weighted_kappa([m for m, _ in pairs], [h for _, h in pairs], weights) if pairs else math.nan
        exact = sum(1 for m, h in pairs if m == h) / len(pairs) if pairs else math.nan
        out.append(
            {"annotator": a.annotator, "items": len(pairs), "kappa": _num(kappa), "exact": _num(exact)}
        )
    return out


def agreement_report(labels: Sequence[AnnotatorLabels], weights: Weights = "quadratic") -> dict[str, Any]:
    """Alpha, pairwise kappas (overall and per tenant) and the disagreements of several annotators."""
    names = [a.annotator for a in labels]
    units = _units(labels)
    by_tenant: dict[str, list[list[int | None]]] = {}
    for tenant, values in units.values():
        by_tenant.setdefault(tenant or "(none)", []).append(values)
    disagreements: list[dict[str, Any]] = []
    for (case_id, chunk_id), (tenant, values) in units.items():
        given = [v for v in values if v is not None]
        if len(set(given)) > 1:
            disagreements.append(
                {
                    "case_id": case_id,
                    "chunk_id": chunk_id,
                    "tenant_id": tenant,
                    "grades": {n: v for n, v in zip(names, values, strict=True) if v is not None},
                    "spread": max(given) - min(given),
                }
            )
    disagreements.sort(key=lambda d: (-int(d["spread"]), str(d["case_id"]), str(d["chunk_id"])))
    cases = sorted({c for a in labels for c in a.state.unanswerable})
    unanswerable = []
    for case_id in cases:
        marks = {
            a.annotator: bool(a.state.unanswerable[case_id]["value"])
            for a in labels
            if case_id in a.state.unanswerable
        }
        if len(set(marks.values())) > 1 or (len(marks) < len(labels) and any(marks.values())):
            unanswerable.append({"case_id": case_id, "marks": marks})
    return {
        "annotators": names,
        "weights": weights,
        "overall": _figures(names, [v for _, v in units.values()], weights),
        "tenants": {t: _figures(names, vals, weights) for t, vals in sorted(by_tenant.items())},
        "disagreements": disagreements,
        "unanswerable_disagreements": unanswerable,
    }
