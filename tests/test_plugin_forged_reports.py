"""The pytest plugin's helpers given a report dict check it as ``ragaudit gate`` does (before: a mean
edited upwards, removed or duplicated cases, blanked values passed ``assert_floors``, and a leak its
cases record passed ``assert_no_leaks`` once the summary was zeroed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragaudit.pytest_plugin import assert_floors, assert_no_leaks
from test_gate_forged_reports import FORGERIES, _drop_worst_fix_counts, _honest

QUALITY = [name for name, (_, gate, _) in FORGERIES.items() if gate == "quality"]
SECURITY = [name for name, (_, gate, _) in FORGERIES.items() if gate == "security"]


def test_the_honest_report_dict_meets_its_floor(tmp_path: Path) -> None:
    data = _honest(tmp_path)
    assert_floors(data, {"MRR": 0.70})  # its cases average 0.7333
    with pytest.raises(AssertionError, match=r"MRR 0.73 < floor 0.80"):
        assert_floors(data, {"MRR": 0.80})
    assert_no_leaks(data, allow_unverified=True)


def test_a_mean_edited_upwards_does_not_meet_the_floor(tmp_path: Path) -> None:
    data = _honest(tmp_path)
    data["metrics"]["MRR"] = 0.95
    with pytest.raises(
        AssertionError, match=r"the report says 0.9500 but its 12 answerable cases average 0.7333"
    ):
        assert_floors(data, {"MRR": 0.80})


@pytest.mark.parametrize("name", QUALITY)
def test_a_forged_report_dict_does_not_meet_its_floor(tmp_path: Path, name: str) -> None:
    forge, _, words = FORGERIES[name]
    data = _honest(tmp_path)
    forge(data)
    with pytest.raises(AssertionError) as failed:
        assert_floors(data, {"MRR": 0.80})
    assert words in str(failed.value)


@pytest.mark.parametrize("name", SECURITY)
def test_a_leak_its_cases_record_is_not_hidden_by_the_summary(tmp_path: Path, name: str) -> None:
    forge, _, words = FORGERIES[name]
    data = _honest(tmp_path)
    forge(data)
    with pytest.raises(AssertionError, match="leaks NOT COUNTED") as failed:
        assert_no_leaks(data, allow_unverified=True)
    assert words in str(failed.value)


def test_counts_edited_to_match_are_still_caught(tmp_path: Path) -> None:
    data = _honest(tmp_path)
    _drop_worst_fix_counts(data)
    with pytest.raises(AssertionError, match="no record of 4 case"):
        assert_floors(data, {"MRR": 0.80})
