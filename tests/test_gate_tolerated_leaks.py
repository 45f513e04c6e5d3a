"""Leaks a policy tolerates (``max_leaks`` above 0) are waived, never passed (before: "[pass] security
1 cross-tenant leak(s) (allowed 5); verified by audit ...": a run that found a leak earned a ✅)."""

from __future__ import annotations

import copy

from ragaudit.evaluation.compare import LoadedReport
from ragaudit.gates.checks import security_gate
from ragaudit.gates.policy import GatePolicy
from test_gate_forged_audits import CLEAN, REPORT

RECORD = {
    "case_id": "q1",
    "chunk_id": "globex-msa",
    "rank": 1,
    "claimed_tenant": "globex",
    "caller_tenant": "acme",
}
LEAKY = LoadedReport(
    "eval",
    "eval.json",
    {
        **REPORT.data,
        "security": {"leaks": 1, "records": [RECORD]},
        "per_case": [{"id": "q1", "leaks": [RECORD]}],
    },
)


def test_a_tolerated_leak_is_waived_not_passed() -> None:
    gate = security_gate(LEAKY, GatePolicy(max_leaks=5), [("audit.json", copy.deepcopy(CLEAN))])
    assert gate.status == "not_verified" and gate.accepted and gate.passed
    assert gate.summary.startswith("1 cross-tenant leak(s) TOLERATED by the policy (max_leaks 5)")
    assert gate.findings == (
        "eval report eval.json: case q1: chunk globex-msa (rank 1) owned by 'globex', asked as 'acme'",
    )


def test_the_same_leak_fails_the_default_policy_and_no_leak_passes() -> None:
    assert security_gate(LEAKY, GatePolicy(), [("audit.json", copy.deepcopy(CLEAN))]).status == "fail"
    assert (
        security_gate(REPORT, GatePolicy(max_leaks=5), [("audit.json", copy.deepcopy(CLEAN))]).status
        == "pass"
    )
