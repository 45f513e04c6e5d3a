"""The fast engine's report, built once from its arrays, is the report ``to_eval_result().to_dict()``
gives; report files are strict JSON whichever encoder writes them, and the history key is one per
report content."""

from __future__ import annotations

import gc
import json
import math
from dataclasses import dataclass, replace
from pathlib import Path

import pytest

from ragaudit.artifacts import json_text
from ragaudit.artifacts.envelope import schema_errors
from ragaudit.artifacts.history import record
from ragaudit.evaluation.fast_report import collector_paused, fast_outcome, fast_report
from ragaudit.evaluation.fast_trec import evaluate_trec_files
from ragaudit.evaluation.outcome import report_outcome
from ragaudit.metrics.policy import Policy
from test_fast_trec import write_collection


@pytest.mark.parametrize("seed", range(8))
def test_fast_report_equals_the_report_of_its_eval_result(tmp_path: Path, seed: int) -> None:
    qrels, run = write_collection(tmp_path, seed)
    result = evaluate_trec_files(qrels, run, "nDCG@10,R@5,MRR,MAP,P@5", Policy(gain="linear"))
    report = fast_report(result, min_judged=0.7)
    reference = replace(result.to_eval_result(), created_at=report["created_at"], min_judged=0.7)
    written = json.loads(json_text.report_bytes(report))
    assert written == json.loads(json_text.report_bytes(reference.to_dict()))  # NaN == NaN as null
    assert written["per_case"] and not schema_errors(written)
    assert fast_outcome(result, "--run run") == report_outcome(report, "--run run", "run")


def test_the_collector_is_paused_only_inside_the_block() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # left as the caller had it
    finally:
        gc.enable()


@dataclass
class _Point:
    x: float


class _Name(str):
    pass


@pytest.mark.parametrize(
    "data",
    [
        {"a": math.nan, "b": [math.inf, -math.inf, 1e-05, 0.1, 2**70], "c": ("t", None, True)},
        {"é": "ü\n\u2028<", 1: "int key", "n": {"deep": [math.nan]}},
        {"name": _Name("sub"), "v": 1.5},
    ],
)
def test_report_files_are_strict_json_with_either_encoder(
    data: dict[object, object], monkeypatch: pytest.MonkeyPatch
) -> None:
    fast = json_text.report_bytes(data)
    canonical = json_text.canonical_bytes(data)
    monkeypatch.setattr(json_text, "orjson", None)
    slow = json_text.report_bytes(data)
    assert fast.endswith(b"\n") and b"NaN" not in fast and b"Infinity" not in fast
    assert json.loads(fast) == json.loads(slow)  # the same values, whoever spelled the floats
    assert json.loads(canonical) == json.loads(json_text.canonical_bytes(data))


def test_unknown_objects_fail_as_the_standard_library_fails() -> None:
    with pytest.raises(TypeError):
        json_text.report_bytes({"p": _Point(1.0)})
    assert json.loads(json_text.canonical_bytes({"p": _Point(1.0)})) == {"p": "_Point(x=1.0)"}


def test_a_report_and_its_file_are_one_history_entry(tmp_path: Path) -> None:
    qrels, run = write_collection(tmp_path, 3)
    report = fast_report(evaluate_trec_files(qrels, run, "nDCG@10,MAP", Policy()))
    report["metrics"]["nDCG@10"] = math.nan  # undefined: NaN in memory, null in the file
    path = tmp_path / "report.json"
    path.write_bytes(json_text.report_bytes(report))
    history = tmp_path / "history.sqlite"
    assert record(report, history) == record(json.loads(path.read_text()), history) == 1
