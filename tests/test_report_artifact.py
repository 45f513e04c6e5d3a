"""The shared artifact envelope and strict-JSON writer: every report starts with the same keys, and an
undefined value (NaN, an infinity) is written as ``null``, never as the non-JSON ``NaN``."""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import ragaudit
from conftest import write_lines
from ragaudit.artifacts.envelope import REPORT_KINDS, envelope, schema_errors, write_artifact
from ragaudit.cli.main import main
from ragaudit.evaluation.result import EvalResult
from ragaudit.metrics.policy import Policy

ENVELOPE_KEYS = ["schema_version", "kind", "ragaudit_version", "created_at", "provenance"]


def reject(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def strict_load(path: Path) -> Any:
    """The file parsed as strict JSON: ``NaN``, ``Infinity`` and ``-Infinity`` are refused."""
    return json.loads(path.read_text(encoding="utf-8"), parse_constant=reject)


def test_the_envelope_has_the_shared_keys_and_the_provenance() -> None:
    env = envelope(
        "k-sweep",
        dataset={"sha256": "a" * 64},
        policy=Policy().to_dict(),
        context={"retrieval": {"top_k": 5}, "pipeline": {"name": "bm25", "config_sha256": "b" * 64}},
    )
    assert list(env) == ENVELOPE_KEYS
    assert env["schema_version"] == 1 and env["kind"] == "k-sweep"
    assert env["ragaudit_version"] == ragaudit.__version__
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", env["created_at"])
    prov = env["provenance"]
    assert prov["dataset_sha256"] == "a" * 64 and prov["k"] == 5 and prov["policy_version"] == 1
    assert prov["pipeline"] == {"name": "bm25", "config_sha256": "b" * 64}
    assert schema_errors(env) == []
    bare = envelope("gate", created_at="2026-01-31T12:00:00+00:00")
    assert bare["created_at"] == "2026-01-31T12:00:00+00:00"
    assert bare["provenance"]["dataset_sha256"] is None and bare["provenance"]["pipeline"] is None
    assert all(
        schema_errors(envelope(kind)) == []
        for kind in REPORT_KINDS
        if kind not in ("eval", "compare", "benchmark")
    )
    with pytest.raises(ValueError, match="unknown report kind 'evaluation'"):
        envelope("evaluation")


def test_write_artifact_writes_strict_json_and_creates_the_folder(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "er" / "report.json"
    data = {
        "mean": math.nan,
        "ci": (-math.inf, math.inf),
        "nested": {"values": [1.5, math.nan, {"x": math.inf}]},
        "name": "café ✓",
        "count": 3,
    }
    write_artifact(data, target)
    text = target.read_text(encoding="utf-8")
    assert text.startswith('{\n  "mean": null,') and text.endswith("}\n") and "café ✓" in text
    assert strict_load(target) == {
        "mean": None,
        "ci": [None, None],
        "nested": {"values": [1.5, None, {"x": None}]},
        "name": "café ✓",
        "count": 3,
    }
    assert data["mean"] != data["mean"]  # the caller's data is not modified


def _undefined_means(tmp_path: Path, metrics: str, name: str = "empty") -> EvalResult:
    """A result whose means are undefined (``nan``): every case unanswerable.

    ``evaluate`` refuses such a dataset (an input error), but reports read from elsewhere (older
    files, other writers) can still carry undefined means, so the writers must keep them strict JSON.
    """
    golden = write_lines(
        tmp_path / "golden.jsonl",
        [json.dumps({"id": f"q{i}", "query": f"question {i}", "relevance": {"d1": 1}}) for i in range(3)],
    )
    run = write_lines(
        tmp_path / "run.jsonl",
        [json.dumps({"id": f"q{i}", "retrieved": [{"chunk_id": "d1", "score": 1.0}]}) for i in range(3)],
    )
    result = ragaudit.evaluate(golden, ragaudit.load_run(run, name=name), metrics)
    return replace(
        result,
        metrics=dict.fromkeys(result.metrics, math.nan),
        counts=replace(result.counts, answerable=0, unanswerable=result.counts.cases),
        per_case=tuple(replace(c, status="unanswerable", metrics={}) for c in result.per_case),
    )


def test_an_eval_with_no_answerable_case_writes_null_metrics(tmp_path: Path) -> None:
    result = _undefined_means(tmp_path, "nDCG@10,R@5")
    assert result.counts.answerable == 0 and all(math.isnan(v) for v in result.metrics.values())
    result.write_json(tmp_path / "report.json")
    report = strict_load(tmp_path / "report.json")
    assert report["metrics"] == {"nDCG@10": None, "R@5": None}
    assert list(report)[:5] == ENVELOPE_KEYS and report["kind"] == "eval"
    assert schema_errors(report) == []


def test_compare_out_of_undefined_means_is_strict_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("a", "b"):
        result = _undefined_means(tmp_path, "R@5", name)
        result.write_json(tmp_path / f"{name}.json")
    out = tmp_path / "cmp" / "compare.json"
    code = main(
        [
            "compare",
            str(tmp_path / "a.json"),
            str(tmp_path / "b.json"),
            "--resamples",
            "50",
            "--out",
            str(out),
        ]
    )
    captured = (
        capsys.readouterr()
    )  # nothing could be scored: no verdict (exit 1), the file written all the same
    assert code == 1 and "comparison written" in captured.out and "no case could be scored" in captured.err
    report = strict_load(out)
    row = report["comparisons"][0]
    assert row["delta"] is None and row["p_value"] is None and row["n"] == 0
    assert list(report)[:5] == ENVELOPE_KEYS and schema_errors(report) == []
