"""k-sweep of an IN-SAMPLE eval report keeps the mark: the sweep is of the same in-sample rankings, so
its terminal view, JSON and rendered reports say IN-SAMPLE as the swept report does (before: nothing)."""

from __future__ import annotations

import json
from pathlib import Path

import ragaudit
from ragaudit.artifacts.envelope import schema_errors
from ragaudit.experiments.k_sweep import sweep_report

GOLDEN = "".join(f'{{"id": "q{i}", "query": "x", "relevance": {{"d{i}": 1}}}}\n' for i in range(4))
IN_SAMPLE = {"state": "in_sample", "cases": 4, "overlap": 4, "stages": [], "text": "IN-SAMPLE: 4 of 4 ..."}


def _report(folder: Path, in_sample: dict[str, object] | None) -> Path:
    golden = folder / "golden.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    report = folder / "report.json"
    ragaudit.evaluate(golden, {f"q{i}": [f"d{i}", "x"] for i in range(4)}, metrics="R@2").write_json(report)
    if in_sample is not None:
        data = json.loads(report.read_text(encoding="utf-8"))
        data["in_sample"] = in_sample
        report.write_text(json.dumps(data), encoding="utf-8")
    return report


def test_the_sweep_of_an_in_sample_report_is_marked(tmp_path: Path) -> None:
    swept = sweep_report(_report(tmp_path, IN_SAMPLE), max_k=2).to_dict()
    assert swept["in_sample"]["state"] == "in_sample"
    assert schema_errors(json.loads(json.dumps(swept))) == []


def test_a_held_out_or_plain_report_adds_no_mark(tmp_path: Path) -> None:
    assert "in_sample" not in sweep_report(_report(tmp_path, None), max_k=2).to_dict()
    held_out = {**IN_SAMPLE, "state": "held_out", "overlap": 0}
    assert "in_sample" not in sweep_report(_report(tmp_path, held_out), max_k=2).to_dict()


def test_a_report_whose_section_was_deleted_is_still_marked(tmp_path: Path) -> None:
    """Before: deleting the swept report's ``in_sample`` section made the sweep read as held out; its
    ``pipeline.fitted`` and cases still say which cases the stage was fitted on."""
    from ragaudit.artifacts.in_sample import case_fingerprint

    report = _report(tmp_path, None)
    data = json.loads(report.read_text(encoding="utf-8"))
    cases = {f"q{i}": case_fingerprint(None, "x") for i in range(4)}
    data["pipeline"] = {"fitted": [{"stage": "reranker", "name": "m", "fitted_on": {"cases": cases}}]}
    report.write_text(json.dumps(data), encoding="utf-8")
    assert sweep_report(report, max_k=2).to_dict()["in_sample"]["state"] == "in_sample"
