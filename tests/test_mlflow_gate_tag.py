"""The MLflow ``ragaudit.gate`` tag is earned from the verdict's gates as the pages show it (before: a
verdict with ``passed: true`` was tagged ``pass`` whether its security gate was NOT VERIFIED and waived,
every gate was skipped, or it listed no gate at all)."""

from __future__ import annotations

from typing import Any

import pytest

from ragaudit.report.mlflow_runs import runs_of

PASSED = {"name": "quality", "passed": True, "status": "pass"}
WAIVED = {"name": "security", "passed": True, "status": "not_verified", "accepted": True}
SKIPPED = {"name": "quality", "passed": True, "status": "skip"}
FAILED = {"name": "operations", "passed": False, "status": "fail"}


def _tag(gate: dict[str, Any]) -> str:
    (run,) = runs_of({"kind": "eval", "metrics": {"nDCG@10": 0.8}, "gate": gate})
    return run.tags["ragaudit.gate"]


@pytest.mark.parametrize(
    ("gate", "tag"),
    [
        ({"passed": True, "verdict": "not_verified", "gates": [PASSED, WAIVED]}, "not_verified"),
        ({"passed": True, "verdict": "pass", "gates": [PASSED, WAIVED]}, "not_verified"),
        ({"passed": True, "verdict": "pass", "gates": [SKIPPED]}, "not_verified"),
        ({"passed": True, "verdict": "pass", "gates": []}, "not_verified"),
        ({"passed": False, "verdict": "fail", "gates": [PASSED, FAILED]}, "fail"),
        ({"passed": True, "verdict": "pass", "gates": [PASSED, {**FAILED, "status": "pass"}]}, "fail"),
        ({"passed": True, "verdict": "pass", "gates": [PASSED]}, "pass"),  # the honest pass
    ],
)
def test_the_gate_tag_is_earned(gate: dict[str, Any], tag: str) -> None:
    assert _tag(gate) == tag
