"""One set of rules says whether a case failed, was answerable, scored and in the run
(:func:`ragaudit.evaluation.outcome.case_rules`): the per-case outcome (``eval_outcome``) and the
fast path's outcome from arrays (``fast_outcome``) both apply it."""

from __future__ import annotations

import pytest

from ragaudit.data.run import MISSING
from ragaudit.evaluation.outcome import case_rules, eval_outcome


@pytest.mark.parametrize(
    ("status", "answered", "error", "expected"),
    [
        ("ok", True, None, (None, True, True, True)),
        ("missing", False, None, (MISSING, True, False, False)),
        ("unanswerable", True, None, (None, False, False, True)),
        ("unanswerable", False, None, (None, False, False, False)),
        ("unanswerable", False, "timeout", ("timeout", False, False, True)),
        ("error", False, "HTTP 500", ("HTTP 500", True, False, True)),
    ],
)
def test_each_kind_of_case(
    status: str, answered: bool, error: str | None, expected: tuple[object, ...]
) -> None:
    assert case_rules(status, answered, error) == expected


def test_an_unanswerable_case_the_run_lacks_is_not_counted_in_the_run() -> None:
    records = [
        {"id": "a", "status": "ok", "answered": True},
        {"id": "b", "status": "unanswerable", "answered": False},
        {"id": "c", "status": "missing", "answered": False},
    ]
    outcome = eval_outcome(records, "--run r", "run", not_in_dataset=2)
    assert (outcome.total, outcome.answerable, outcome.scored) == (3, 2, 1)
    assert (outcome.run_ids, outcome.shared_ids) == (3, 1)
    assert outcome.failures == (("c", MISSING),)
