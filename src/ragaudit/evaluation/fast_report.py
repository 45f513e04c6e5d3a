"""The ``eval`` report of a :class:`~ragaudit.evaluation.fast_trec.FastResult`, built once from its arrays.

``fast_report(result)`` equals ``result.to_eval_result().to_dict()`` (tested), without one
:class:`~ragaudit.evaluation.result.CaseResult` per query: the keys that do not depend on the cases
come from an :class:`~ragaudit.evaluation.result.EvalResult` holding none, and the two that do
(``missing`` and ``per_case``) are built from the columns. :func:`fast_outcome` is the outcome
``report_outcome`` reads from that report, taken from the arrays instead of 100,000 case records.

The case records are built with Python's cyclic garbage collector paused: they are acyclic (plain
dicts, lists and floats, freed by reference counting), and on 100,000 queries the collector would
otherwise walk the growing pile of records hundreds of times, doubling the time to build them.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from itertools import repeat
from typing import TYPE_CHECKING, Any

from ragaudit.data.beir import DEFAULT_TENANT
from ragaudit.evaluation.holes import DEFAULT_MIN_JUDGED
from ragaudit.evaluation.outcome import SourceOutcome, case_rules, counted_outcome
from ragaudit.evaluation.slices import one_tenant_slices

if TYPE_CHECKING:
    from ragaudit.evaluation.fast_trec import FastResult


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (reference counting still frees everything) while many
    acyclic objects are built; it is back on, if it was on, when the block ends."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def case_records(result: FastResult) -> list[dict[str, Any]]:
    """The ``per_case`` section: every qrels query in order, as ``CaseResult.to_json`` writes it."""
    import numpy as np

    names = list(result.per_query)
    ok, seen = result.answerable, result.in_run
    with collector_paused():
        columns = [result.per_query[name].tolist() for name in names]
        rows = zip(*columns, strict=True) if columns else repeat((), int(ok.sum()))
        scored = iter(list(map(dict, map(zip, repeat(names), rows))))
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
    report["missing"] = [result.cases[i] for i in missing.nonzero()[0].tolist()]
    report["per_case"] = case_records(result)
    report["tenant_slices"] = one_tenant_slices(
        DEFAULT_TENANT, int(result.answerable.sum()), len(report["missing"])
    )
    return report


def fast_outcome(result: FastResult, label: str) -> SourceOutcome:
    """``report_outcome(fast_report(result), label, "run")`` (equal, tested), from the arrays: the
    cases of each kind the records hold (``status``, answered; no errors, no leaks) are counted, and
    each kind is judged once by :func:`~ragaudit.evaluation.outcome.case_rules`."""
    ok, seen = result.answerable, result.in_run
    cases = result.cases
    kinds = {
        ("ok", True): ok & seen,
        ("missing", False): ok & ~seen,
        ("unanswerable", True): ~ok & seen,
        ("unanswerable", False): ~ok & ~seen,
    }
    answerable = scored = in_run = 0
    failed: list[tuple[int, str]] = []
    for (status, answered), mask in kinds.items():
        n = int(mask.sum())
        reason, is_answerable, is_scored, present = case_rules(status, answered, None)
        answerable += n * is_answerable
        scored += n * is_scored
        in_run += n * present
        if reason is not None:
            failed += ((i, reason) for i in mask.nonzero()[0].tolist())
    failures = [(cases[i], reason) for i, reason in sorted(failed)]  # dataset order
    return counted_outcome(
        label,
        "run",
        (len(cases), answerable, scored, in_run),
        failures,
        not_in_dataset=result.counts.not_in_qrels,
        dataset_sample=cases[:3],
    )
