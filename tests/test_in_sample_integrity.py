"""An eval report whose ``in_sample`` section was deleted or edited to ``held_out`` is caught by its own
records (``pipeline.fitted`` and ``per_case``), so an in-sample figure never reads as a held-out claim
(before: deleting the section made the quality gate PASS the floor, and ``history --record`` took the
run into the trends).

The honest twins: the unedited in-sample report stays NOT VERIFIED in the quality gate (as before), and
a held-out report, unedited, passes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

import ragaudit
from ragaudit.artifacts.in_sample import case_fingerprint
from ragaudit.cli.main import main
from ragaudit.evaluation.in_sample_integrity import in_sample_inconsistency
from ragaudit.gates.policy import GatePolicy
from ragaudit.gates.verdict import run_gates
from test_gate_forged_reports import CASES, GOLDEN, _run

POLICY = GatePolicy(floors={"MRR": 0.5}, allow_unverified=True)


def _report(tmp_path: Path, fitted_ids: range) -> dict[str, Any]:
    """An eval report of a pipeline whose fitted stage learned from the cases ``fitted_ids``."""
    golden = tmp_path / "golden.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    cases = {f"q{i:02d}": case_fingerprint("acme", f"question {i}") for i in fitted_ids}
    stage = {
        "stage": "reranker",
        "name": "learned fusion (m.json)",
        "fitted_on": {"dataset": {"path": "other.jsonl", "sha256": "f" * 64}, "cases": cases},
    }
    context = {"pipeline": {"name": "fused", "config_sha256": "ab" * 32, "fitted": [stage]}}
    path = tmp_path / "made.json"
    ragaudit.evaluate(golden, _run(), metrics="MRR", context=context).write_json(path)
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _gate(tmp_path: Path, data: dict[str, Any]) -> dict[str, str]:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    verdict = run_gates(path, POLICY, resamples=200)
    return {g.gate: g.status for g in verdict.gates}


def test_a_deleted_or_edited_in_sample_section_fails_the_gate(tmp_path: Path) -> None:
    honest = _report(tmp_path, range(CASES))
    assert honest["in_sample"]["state"] == "in_sample" and in_sample_inconsistency(honest) is None
    assert _gate(tmp_path, honest)["quality"] == "not_verified"
    deleted = copy.deepcopy(honest)
    del deleted["in_sample"]
    why = in_sample_inconsistency(deleted)
    assert why is not None and why.startswith(
        "the report records a fitted stage but has no in_sample section"
    )
    assert f"IN-SAMPLE (overlap {CASES} of {CASES} answerable cases" in why
    assert _gate(tmp_path, deleted)["quality"] == "fail"
    edited = copy.deepcopy(honest)
    edited["in_sample"].update(state="held_out", overlap=0)
    why = in_sample_inconsistency(edited)
    assert why is not None and "says 'held_out' (overlap 0)" in why
    assert _gate(tmp_path, edited)["quality"] == "fail"


def test_history_refuses_a_report_whose_section_was_deleted(tmp_path: Path) -> None:
    deleted = _report(tmp_path, range(3))
    del deleted["in_sample"]
    path = tmp_path / "deleted.json"
    path.write_text(json.dumps(deleted), encoding="utf-8")
    assert main(["history", "--record", str(path), "--history", str(tmp_path / "h.sqlite")]) == 2


def test_a_model_file_that_records_its_fitting_catches_both_deletions(tmp_path: Path) -> None:
    honest = _report(tmp_path, range(CASES))
    model = tmp_path / "m.json"
    model.write_text(json.dumps({"kind": "fusion", "fitted_on": {"dataset": {"sha256": "f" * 64}}}))
    both = copy.deepcopy(honest)
    del both["in_sample"], both["pipeline"]["fitted"]
    both["pipeline"]["config"] = {"rerank": {"type": "learned", "model": str(model)}}
    why = in_sample_inconsistency(both)
    assert why is not None and "both were deleted" in why
    model.write_text(json.dumps({"kind": "fusion"}))  # a model that records nothing: nothing to hold it to
    assert in_sample_inconsistency(both) is None


def test_a_held_out_report_unedited_passes(tmp_path: Path) -> None:
    held = _report(tmp_path, range(0))  # fitted on none of these cases
    assert held["in_sample"]["state"] == "held_out" and in_sample_inconsistency(held) is None
    assert _gate(tmp_path, held)["quality"] == "pass"


def test_the_plugin_floors_check_the_section_as_it_came(tmp_path: Path) -> None:
    from ragaudit.pytest_plugin.assertions import assert_floors

    assert_floors(_report(tmp_path, range(0)), {"MRR": 0.5})  # held out, unedited: met
    deleted = _report(tmp_path, range(CASES))
    del deleted["in_sample"]
    with pytest.raises(AssertionError, match="has no in_sample section"):
        assert_floors(deleted, {"MRR": 0.5})
    with pytest.raises(AssertionError, match="IN-SAMPLE") as raised:
        assert_floors(_report(tmp_path, range(CASES)), {"MRR": 0.5})  # unedited in-sample: not earned
    assert "no in_sample section" not in str(raised.value)


def test_compare_marks_a_report_whose_section_was_deleted(tmp_path: Path) -> None:
    from ragaudit.evaluation.compare import LoadedReport, compare_reports

    honest = _report(tmp_path, range(0))
    deleted = _report(tmp_path, range(CASES))
    del deleted["in_sample"]
    reports = [LoadedReport("base", "base.json", honest), LoadedReport("fused", "fused.json", deleted)]
    compared = compare_reports(reports, metrics=["MRR"], n_resamples=200)
    assert compared["in_sample"]["systems"] == ["fused"]  # before: no mark, a held-out claim
    twin = [reports[0], LoadedReport("other", "other.json", honest)]
    assert "in_sample" not in compare_reports(twin, metrics=["MRR"], n_resamples=200)


def test_the_pages_mark_a_report_whose_section_was_deleted(tmp_path: Path) -> None:
    from ragaudit.report.html import render_html
    from ragaudit.report.markdown import render_markdown
    from ragaudit.report.terminal import render_terminal
    from ragaudit.report.view import build_view

    deleted = _report(tmp_path, range(CASES))
    del deleted["in_sample"]
    assert render_terminal(deleted).startswith("IN-SAMPLE: ")
    assert "IN-SAMPLE" in render_markdown(build_view(deleted)) and "IN-SAMPLE" in render_html(
        build_view(deleted)
    )
    held = _report(tmp_path, range(0))  # the honest twin: held out, no mark
    assert "IN-SAMPLE" not in render_terminal(held) and "IN-SAMPLE" not in render_markdown(build_view(held))


def test_mlflow_tags_a_report_whose_section_was_deleted(tmp_path: Path) -> None:
    from ragaudit.report.mlflow_runs import runs_of

    deleted = _report(tmp_path, range(CASES))
    del deleted["in_sample"]
    assert runs_of(deleted)[0].tags["ragaudit.in_sample"] == "in_sample"
    assert runs_of(_report(tmp_path, range(0)))[0].tags["ragaudit.in_sample"] == "held_out"
