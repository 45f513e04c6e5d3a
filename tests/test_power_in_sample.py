"""power on an IN-SAMPLE report says so: the spread of a fitted stage's scores on the cases it was fitted
on is not the spread on new queries, so the case counts rest on flattered figures (before: no word)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import ragaudit
from ragaudit.cli.main import main

GOLDEN = "".join(f'{{"id": "q{i}", "query": "x", "relevance": {{"d{i}": 1}}}}\n' for i in range(8))
IN_SAMPLE = {"state": "in_sample", "cases": 8, "overlap": 8, "stages": [], "text": "IN-SAMPLE: all 8 ..."}


def _reports(folder: Path) -> tuple[Path, Path]:
    golden = folder / "golden.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    base, fitted = folder / "base.json", folder / "fitted.json"
    ragaudit.evaluate(golden, {f"q{i}": ["x", f"d{i}"] for i in range(8)}, metrics="MRR").write_json(base)
    ragaudit.evaluate(golden, {f"q{i}": [f"d{i}"] if i % 3 else ["x", "y", f"d{i}"] for i in range(8)},
                      metrics="MRR").write_json(fitted)  # fmt: skip
    data = json.loads(fitted.read_text(encoding="utf-8"))
    data["in_sample"] = IN_SAMPLE
    fitted.write_text(json.dumps(data), encoding="utf-8")
    return base, fitted


def test_power_names_an_in_sample_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base, fitted = _reports(tmp_path)
    out = tmp_path / "power.json"
    code = main(["power", str(fitted), "--baseline", str(base), "--metric", "MRR", "--delta", "0.1",
                 "--out", str(out)])  # fmt: skip
    assert code == 0
    assert capsys.readouterr().out.startswith("IN-SAMPLE: ")
    assert json.loads(out.read_text(encoding="utf-8"))["in_sample"]["state"] == "in_sample"
    assert main(["power", str(base), "--metric", "MRR", "--delta", "0.1"]) == 0
    assert "IN-SAMPLE" not in capsys.readouterr().out
