"""A report whose mean is NaN while its cases are scored is corrupt, and the gate says that (before:
"nDCG@10 nan (no answerable case)", which sent the user looking for a golden-set problem)."""

from __future__ import annotations

import json
from pathlib import Path

import ragaudit
from ragaudit.gates.policy import load_policy
from ragaudit.gates.verdict import run_gates

GOLDEN = "".join(f'{{"id": "q{i}", "query": "x", "relevance": {{"d{i}": 1}}}}\n' for i in range(6))


def _policy(folder: Path) -> Path:
    path = folder / "gates.toml"
    path.write_text(
        '[quality]\nfloors = { "MRR" = 0.5 }\n[security]\nallow_unverified = true\n', encoding="utf-8"
    )
    return path


def test_a_nan_mean_over_scored_cases_is_named_corrupt(tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    report = tmp_path / "report.json"
    ragaudit.evaluate(golden, {f"q{i}": [f"d{i}"] for i in range(6)}, metrics="MRR").write_json(report)
    data = json.loads(report.read_text(encoding="utf-8"))
    data["metrics"]["MRR"] = float("nan")
    report.write_text(json.dumps(data), encoding="utf-8")
    verdict = run_gates(report, load_policy(_policy(tmp_path)))
    quality = next(g for g in verdict.gates if g.gate == "quality")
    assert quality.status == "fail" and not verdict.passed
    assert quality.findings == (
        "MRR: the report's mean is nan, not a number, but its 6 answerable cases average 1.0000: it was edited "
        "or is corrupt; gate the report 'ragaudit eval' wrote",
    )
