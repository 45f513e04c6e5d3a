"""ragaudit compare: paired statistics over eval reports, refusing apples-to-oranges comparisons."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import ragaudit
from conftest import write_lines
from ragaudit.cli.main import main
from ragaudit.errors import InputError
from ragaudit.evaluation.compare import compare_reports, load_report
from ragaudit.metrics.policy import Policy


@pytest.fixture
def reports(tmp_path: Path) -> dict[str, Path]:
    rng = np.random.default_rng(0)
    golden = write_lines(
        tmp_path / "g.jsonl",
        [
            json.dumps({"id": f"q{i}", "query": f"query {i}", "relevant_chunk_ids": [f"d{i}"]})
            for i in range(40)
        ],
    )
    docs = [f"d{i}" for i in range(40)]
    weak = {f"q{i}": list(rng.permutation(docs)[:10]) for i in range(40)}
    strong = {q: [f"d{q[1:]}", *ids] for q, ids in weak.items()}  # the relevant doc first everywhere
    paths = {}
    for name, run in (("weak", weak), ("strong", strong), ("same", weak)):
        result = ragaudit.evaluate(golden, run, "nDCG@10,R@5,MRR")
        paths[name] = tmp_path / f"{name}.json"
        result.write_json(paths[name])
    other = write_lines(
        tmp_path / "g2.jsonl", [json.dumps({"id": "x", "query": "q", "relevant_chunk_ids": ["d"]})]
    )
    paths["other_dataset"] = tmp_path / "other.json"
    ragaudit.evaluate(other, {"x": ["d"]}, "nDCG@10").write_json(paths["other_dataset"])
    paths["linear"] = tmp_path / "linear.json"
    ragaudit.evaluate(golden, weak, "nDCG@10,R@5,MRR", Policy(gain="linear")).write_json(paths["linear"])
    return paths


def test_a_real_improvement_is_significant_and_no_change_is_not(reports: dict[str, Path]) -> None:
    loaded = [
        load_report(reports["weak"], "weak"),
        load_report(reports["strong"], "strong"),
        load_report(reports["same"], "same"),
    ]
    result = compare_reports(loaded, n_resamples=2000)
    rows = {(c["system"], c["metric"]): c for c in result["comparisons"]}
    assert len(rows) == 6 and result["correction"] == "holm-bonferroni"
    better = rows[("strong", "MRR")]
    assert better["delta"] > 0.5 and better["significant"] and better["wins"] > 30
    assert better["ci"][0] > 0 and better["p_value_corrected"] >= better["p_value"]
    same = rows[("same", "MRR")]
    assert same["delta"] == 0 and not same["significant"] and same["ties"] == 40 and same["p_value"] == 1.0
    assert better["most_improved"] and not better["most_regressed"]
    assert set(better) >= {
        "metric",
        "baseline",
        "system",
        "baseline_mean",
        "system_mean",
        "delta",
        "ci",
        "p_value",
        "p_value_corrected",
        "test",
        "significant",
        "wins",
        "ties",
        "losses",
    }


def test_refuses_different_datasets_and_policies(reports: dict[str, Path]) -> None:
    with pytest.raises(InputError, match="different dataset"):
        compare_reports([load_report(reports["weak"]), load_report(reports["other_dataset"])])
    with pytest.raises(InputError, match=r"different metric policy.*gain"):
        compare_reports([load_report(reports["weak"]), load_report(reports["linear"])])


def test_compare_cli(reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "cmp.json"
    code = main(
        [
            "compare",
            str(reports["strong"]),
            "--baseline",
            str(reports["weak"]),
            "--resamples",
            "1000",
            "--metrics",
            "MRR,nDCG@10",
            "--out",
            str(out),
        ]
    )
    text = capsys.readouterr().out
    assert code == 0
    assert "p (Holm)" in text and "*" in text
    saved = json.loads(out.read_text())
    assert [c["metric"] for c in saved["comparisons"]] == ["MRR", "nDCG@10"]
    assert main(["compare", str(reports["weak"]), str(reports["other_dataset"])]) == 2
    assert "different dataset" in capsys.readouterr().err


def test_a_report_of_a_failed_run_fails_the_comparison(
    reports: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A candidate 'better' only because the baseline's run lacked cases (scored 0) is no verdict: the
    inputs go through the exit rule of 'ragaudit eval', --max-error-rate included."""
    golden = json.loads(reports["weak"].read_text())["dataset"]["path"]
    docs = [f"d{i}" for i in range(40)]
    partial = {f"q{i}": [f"d{i}", *docs[:9]] for i in range(30)}  # 10 of 40 cases missing
    broken = tmp_path / "broken.json"
    ragaudit.evaluate(golden, partial, "nDCG@10,R@5,MRR").write_json(broken)
    args = ["compare", str(broken), str(reports["strong"]), "--resamples", "200"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "FAILED report broken: 10 of 40 cases failed (25.0%; --max-error-rate allows 0.0%)" in err
    assert "10 missing" in err
    assert main([*args, "--max-error-rate", "0.25"]) == 0
    assert "note: report broken: 10 of 40 cases failed" in capsys.readouterr().err
