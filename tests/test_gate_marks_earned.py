"""A gate section or verdict earns its ✅ / PASS from gates that passed, never from its own claim
(before: ``{"passed": true, "gates": []}`` showed "Gate: ✅ PASSED", a gate with ``"status": "pass"``
and ``"passed": false`` showed ✅, and a verdict of skipped gates only read "PASS")."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from ragaudit.gates.policy import GatePolicy
from ragaudit.gates.verdict import run_gates
from ragaudit.report.html import render_html
from ragaudit.report.markdown import render_markdown
from ragaudit.report.terminal import render_terminal
from ragaudit.report.view import build_view
from test_gate_forged_reports import _honest


def _verdict(tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    report = _honest(tmp_path)
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report), encoding="utf-8")
    verdict = run_gates(path, GatePolicy(floors={"MRR": 0.5}, allow_unverified=True), resamples=1000)
    return report, verdict.to_dict()


def _markdown(report: dict[str, Any], gate: dict[str, Any]) -> str:
    return render_markdown(build_view({**report, "gate": gate}))


def test_the_honest_verdict_keeps_its_marks(tmp_path: Path) -> None:
    report, gate = _verdict(tmp_path)
    page = _markdown(report, gate)
    assert "**Gate: ⚠️ NOT VERIFIED**" in page  # security waived, still not verified
    assert "- ✅ quality" in page and "- ⚠️ security" in page
    gate["gates"] = [g for g in gate["gates"] if g["name"] != "security"]
    gate["verdict"] = "pass"
    assert "**Gate: ✅ PASSED**" in _markdown(report, gate)


def test_a_gate_section_with_no_gate_is_no_pass(tmp_path: Path) -> None:
    report, gate = _verdict(tmp_path)
    empty = {**gate, "passed": True, "verdict": "pass", "gates": []}
    assert "✅" not in _markdown(report, empty)
    assert "✅" not in render_html(build_view({**report, "gate": empty}))
    assert "PASS (" not in render_terminal(empty)


def test_only_skipped_gates_are_no_pass(tmp_path: Path) -> None:
    _, gate = _verdict(tmp_path)
    skipped = {**gate, "passed": True, "verdict": "pass"}
    skipped["gates"] = [{**g, "status": "skip", "passed": True} for g in gate["gates"]]
    assert "NOT VERIFIED (no gate checked anything: 4 gates, 4 with nothing to check)" in render_terminal(
        skipped
    )


def test_a_gate_stated_pass_that_did_not_pass_is_a_failure(tmp_path: Path) -> None:
    report, gate = _verdict(tmp_path)
    claimed = copy.deepcopy(gate)
    quality = next(g for g in claimed["gates"] if g["name"] == "quality")
    quality["passed"] = False  # its status still says pass
    page = _markdown(report, claimed)
    assert "- ❌ quality" in page and "**Gate: ❌ FAILED**" in page
    assert "ragaudit gate: FAIL (1 of 4 gates failed)" in render_terminal(claimed)
