"""``ragaudit compare`` exits 1 when a report's case records do not account for its figures (before: a
report with its worst cases removed compared exit 0, with only a note that the two scored different
cases); the report as written compares exit 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragaudit.cli.main import main
from test_gate_forged_reports import _drop_worst, _honest


def test_a_report_with_cases_removed_fails_the_comparison(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = _honest(tmp_path)
    baseline = tmp_path / "baseline.json"
    baseline.write_text(json.dumps(data), encoding="utf-8")
    honest = tmp_path / "honest.json"
    honest.write_text(json.dumps({**data, "run": {**data["run"], "name": "twin"}}), encoding="utf-8")
    _drop_worst(data)
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps({**data, "run": {**data["run"], "name": "forged"}}), encoding="utf-8")
    assert main(["compare", str(baseline), str(honest), "--resamples", "1000"]) == 0
    capsys.readouterr()
    assert main(["compare", str(baseline), str(forged), "--resamples", "1000"]) == 1
    assert "FAILED report forged: the report lists 8 case(s)" in capsys.readouterr().err
