"""``ragaudit power`` on two real eval reports over the demo KB golden set."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

import ragaudit
from conftest import KB
from ragaudit.cli.main import main
from ragaudit.stats.power import cases_needed, detectable_delta


def _report(tmp_path: Path, name: str, seed: int) -> Path:
    """An eval report of a run that puts each case's relevant document at a random rank (or nowhere)."""
    rng = random.Random(seed)
    golden = [json.loads(line) for line in (KB / "golden.jsonl").read_text(encoding="utf-8").splitlines()]
    docs = [
        json.loads(line)["doc_id"] for line in (KB / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    run = tmp_path / f"{name}.trec"
    with run.open("w", encoding="utf-8") as out:
        for case in golden:
            ranking = rng.sample(docs, 10)
            if case["relevant_chunk_ids"] and rng.random() < 0.8:
                ranking.insert(rng.randrange(0, 6), case["relevant_chunk_ids"][0])
            for rank, doc in enumerate(dict.fromkeys(ranking), start=1):
                out.write(f"{case['id']} Q0 {doc} {rank} {100 - rank} {name}\n")
    report = tmp_path / f"{name}.json"
    args = [
        "eval",
        "--dataset",
        str(KB / "golden.jsonl"),
        "--run",
        str(run),
        "--out",
        str(report),
        "--no-history",
    ]
    assert main([*args, "--metrics", "nDCG@10,R@5"]) == 0
    return report


def _per_case(path: Path, metric: str) -> dict[str, float]:
    data = json.loads(path.read_text())
    return {
        c["id"]: c["metrics"][metric] for c in data["per_case"] if isinstance(c["metrics"].get(metric), float)
    }


def test_power_from_paired_differences(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base, system = _report(tmp_path, "base", 1), _report(tmp_path, "system", 2)
    capsys.readouterr()
    out = tmp_path / "power.json"
    args = ["power", str(system), "--baseline", str(base), "--delta", "0.05", "--out", str(out)]
    assert main(args) == 0
    printed = capsys.readouterr().out
    a, b = _per_case(system, "nDCG@10"), _per_case(base, "nDCG@10")
    diffs = np.array([a[k] - b[k] for k in sorted(a)])
    sd = float(diffs.std(ddof=1))
    figures = json.loads(out.read_text())["metrics"][0]
    assert figures["metric"] == "nDCG@10"
    assert figures["cases"] == len(diffs) == 75  # the 9 unanswerable probes have no nDCG
    assert figures["sd_of_differences"] == pytest.approx(sd)
    assert figures["cases_needed"] == cases_needed(sd, 0.05)
    assert figures["smallest_detectable_delta"] == pytest.approx(detectable_delta(sd, 75))
    assert str(cases_needed(sd, 0.05)) in printed
    assert "sd of differences" in printed


def test_power_without_baseline_says_what_it_assumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    report = _report(tmp_path, "only", 3)
    capsys.readouterr()
    assert main(["power", str(report), "--metric", "R@5"]) == 0
    printed = capsys.readouterr().out
    assert "R@5" in printed and "stands in for the spread of per-case differences" in printed


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--delta", "0"], "--delta"),
        (["--alpha", "1.5"], "--alpha"),
        (["--metric", "MAP@1000"], "no per-case MAP@1000"),
    ],
)
def test_power_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: list[str], message: str
) -> None:
    report = _report(tmp_path, "r", 4)
    capsys.readouterr()
    assert main(["power", str(report), *extra]) == 2
    assert message in capsys.readouterr().err


def test_power_on_a_handful_of_cases_says_it_is_a_rough_guide(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: "cases for delta 0.02: 78" from the spread of 2 cases, said like the figure of 75."""
    golden = tmp_path / "few.jsonl"
    lines = (KB / "golden.jsonl").read_text(encoding="utf-8").splitlines()
    answerable = [line for line in lines if json.loads(line)["relevant_chunk_ids"]][:3]
    golden.write_text("\n".join(answerable) + "\n", encoding="utf-8")
    run = {
        json.loads(line)["id"]: ["x", json.loads(line)["relevant_chunk_ids"][0]] for line in answerable[:1]
    }
    report = tmp_path / "few.json"
    ragaudit.evaluate(golden, run, metrics="nDCG@10").write_json(report)
    capsys.readouterr()
    assert main(["power", str(report)]) == 0
    assert "the spread rests on 3 case(s), fewer than 10" in capsys.readouterr().out
    full = _report(tmp_path, "full", 4)
    capsys.readouterr()
    assert main(["power", str(full)]) == 0
    assert "rests on" not in capsys.readouterr().out  # 75 cases: no such note
