"""``ragaudit history --record`` refuses a report whose case records do not account for its figures
(before: a report whose cases record a leak under a zeroed summary was recorded, exit 0, and the
history read "no leak seen"); the report as written is recorded."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ragaudit.cli.main import main
from test_gate_forged_reports import _drop_worst, _hidden_leak, _honest


@pytest.mark.parametrize("forge", [_hidden_leak, _drop_worst])
def test_a_forged_report_is_not_recorded(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], forge: Callable[[dict[str, Any]], None]
) -> None:
    data = _honest(tmp_path)
    honest = tmp_path / "honest.json"
    honest.write_text(json.dumps(data), encoding="utf-8")
    forge(data)
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(data), encoding="utf-8")
    history = tmp_path / "h.sqlite"
    assert main(["history", "--history", str(history), "--record", str(honest), str(forged)]) == 2
    assert "not recorded:" in capsys.readouterr().err
    assert main(["history", "--history", str(history), "--record", str(honest)]) == 0
    assert "(1 matching run)" in capsys.readouterr().out
