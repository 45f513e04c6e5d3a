"""The ``eval`` report of a :class:`~ragaudit.evaluation.fast_trec.FastResult`, built once from its arrays.

``fast_report(result)`` equals ``result.to_eval_result().to_dict()`` (tested), without one
:class:`~ragaudit.evaluation.result.CaseResult` per query: the keys that do not depend on the cases
come from an :class:`~ragaudit.evaluation.result.EvalResult` holding none, and the two that do
(``missing`` and ``per_case``) are built from the columns. On 100,000 queries that is a few tenths
of a second instead of seconds; the commands then write, hash and summarise that one dict.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ragaudit.data.beir import DEFAULT_TENANT
from ragaudit.evaluation.holes import DEFAULT_MIN_JUDGED
from ragaudit.evaluation.slices import tenant_slices

if TYPE_CHECKING:
    from ragaudit.evaluation.fast_trec import FastResult


def case_records(result: FastResult) -> list[dict[str, Any]]:
    """The ``per_case`` section: every qrels query in order, as ``CaseResult.to_json`` writes it."""
    import numpy as np

    names = list(result.per_query)
    columns = [result.per_query[name].tolist() for name in names]
    ok, seen = result.answerable, result.in_run
    rows = zip(*columns, strict=True) if columns else ([] for _ in range(int(ok.sum())))
    scored = iter([dict(zip(names, row, strict=True)) for row in rows])
    status = np.where(ok, np.where(seen, "ok", "missing"), "unanswerable").tolist()
    return [
        {
            "id": case,
            "status": state,
            "answered": answered,
            "answerable": answerable,
            "metrics": next(scored) if answerable else {},
            "retrieved": [],
            "tenant_id": DEFAULT_TENANT,
        }
        for case, state, answerable, answered in zip(
            result.cases, status, ok.tolist(), seen.tolist(), strict=True
        )
    ]


def fast_report(result: FastResult, min_judged: float = DEFAULT_MIN_JUDGED) -> dict[str, Any]:
    """The eval report (``EvalResult.to_dict()``) of ``result``; ``min_judged`` as ``--min-judged``."""
    shell = replace(result.to_eval_result(with_cases=False), min_judged=min_judged)
    report = shell.to_dict()
    missing = result.answerable & ~result.in_run
    report["missing"] = [case for case, gone in zip(result.cases, missing.tolist(), strict=True) if gone]
    report["per_case"] = case_records(result)
    report["tenant_slices"] = tenant_slices(report["per_case"], list(report["metrics"]))
    return report
