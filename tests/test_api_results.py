"""The typed results of the Python API (ragaudit.api): to_dict is the command's report, to_pandas needs
pandas and says how to install it, the notebook view is the command's text, and the synchronous calls
work from a running event loop."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from pathlib import Path

import pytest

import ragaudit
from ragaudit.api.calls import run_sync
from ragaudit.report.terminal import render_terminal

KB = Path(ragaudit.__file__).parent / "demo_data" / "kb"
GOLDEN = KB / "golden.jsonl"


@pytest.fixture(scope="module")
def evaluation() -> ragaudit.Evaluation:
    ideal = {}
    for line in GOLDEN.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        grades = case.get("relevance", {})
        ideal[case["id"]] = sorted(grades, key=lambda d: (-grades[d], d))
    return ragaudit.evaluate(GOLDEN, ideal, metrics="nDCG@10,R@5")


def test_evaluate_returns_an_evaluation_that_is_an_eval_result(evaluation: ragaudit.Evaluation) -> None:
    assert isinstance(evaluation, ragaudit.EvalResult) and isinstance(evaluation, ragaudit.Evaluation)
    assert evaluation.metrics["nDCG@10"] == pytest.approx(1.0)
    assert evaluation.to_dict()["kind"] == "eval"


def test_the_notebook_view_is_the_terminal_text(evaluation: ragaudit.Evaluation) -> None:
    text = render_terminal(evaluation.to_dict())
    html = evaluation._repr_html_()
    assert html.startswith('<pre class="ragaudit">') and "nDCG@10" in html
    assert html.count("\n") == text.count("\n")
    assert "per tenant: mean [95% CI]" in html


def test_the_tables_of_an_evaluation(evaluation: ragaudit.Evaluation) -> None:
    cases = evaluation.to_pandas()
    assert len(cases) == 84 and cases.loc[cases["status"] == "unanswerable", "nDCG@10"].isna().all()
    assert evaluation.to_pandas("metrics").set_index("metric")["mean"].to_dict() == pytest.approx(
        evaluation.metrics
    )
    with pytest.raises(ragaudit.InputError, match="use one of: cases, metrics, tenants"):
        evaluation.to_pandas("nope")


def test_without_pandas_to_pandas_names_the_pip_command(
    evaluation: ragaudit.Evaluation, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now raises ImportError
    with pytest.raises(ragaudit.MissingDependencyError, match=r"pip install 'ragaudit\[pandas\]'"):
        evaluation.to_pandas()
    assert evaluation.to_dict()["metrics"]  # the rest needs no pandas


def test_run_sync_runs_on_a_worker_thread_when_a_loop_is_running() -> None:
    async def where() -> str:
        return threading.current_thread().name

    assert run_sync(where) == threading.current_thread().name

    async def notebook_cell() -> str:
        return run_sync(where)

    assert asyncio.run(notebook_cell()).startswith("ragaudit")


def test_gate_and_compare_take_results_and_dicts(evaluation: ragaudit.Evaluation, tmp_path: Path) -> None:
    evaluation.write_json(tmp_path / "ideal.json")
    verdict = ragaudit.gate(evaluation.to_dict(), {"quality": {"floors": {"nDCG@10": 0.99}}})
    assert [g.gate for g in verdict.verdict.gates] == ["self-test", "quality", "security", "operations"]
    assert verdict.to_dict()["kind"] == "gate"
    assert verdict.state == "not_verified"  # a run file's isolation cannot be verified
    with pytest.raises(ragaudit.ValidationError):
        ragaudit.gate(evaluation, {"quality": {"floorz": {}}})
    compared = ragaudit.compare(tmp_path / "ideal.json", evaluation, metrics="nDCG@10")
    assert compared.to_dict()["kind"] == "compare"
    assert compared.to_pandas()["delta"].tolist() == [0.0]
    assert set(compared.to_pandas("tenants")["tenant"]) == {"acme", "globex", "initech"}
