"""``assert_no_leaks`` does not pass a run whose service did not answer (before: with
``allow_unverified=True`` it passed when every case failed with "service unreachable": no chunk came
back, so no leak was seen); the run as it answered still passes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ragaudit.pytest_plugin import assert_no_leaks
from test_gate_forged_reports import _honest


def _unreachable(data: dict[str, Any], cases: int) -> dict[str, Any]:
    for case in data["per_case"][:cases]:
        case.update(
            status="error", answered=False, retrieved=[], error="ConnectionError: service unreachable"
        )
        case["metrics"] = dict.fromkeys(case["metrics"], 0.0)
    return data


def test_the_answered_run_passes(tmp_path: Path) -> None:
    assert_no_leaks(_honest(tmp_path), allow_unverified=True)


@pytest.mark.parametrize("cases", [1, 12])
def test_a_run_that_was_not_answered_checked_no_leak(tmp_path: Path, cases: int) -> None:
    data = _unreachable(_honest(tmp_path), cases)
    with pytest.raises(
        AssertionError, match=rf"leaks NOT CHECKED: the run failed: {cases} of 12 cases failed"
    ):
        assert_no_leaks(data, allow_unverified=True)


def test_a_tolerated_share_of_failures_is_stated(tmp_path: Path) -> None:
    data = _unreachable(_honest(tmp_path), 1)
    assert_no_leaks(data, allow_unverified=True, max_error_rate=0.1)
