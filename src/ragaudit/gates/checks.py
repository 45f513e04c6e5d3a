"""The four release gates, one module each, gathered here (``ragaudit gate`` runs them through
:mod:`ragaudit.gates.verdict`). Each returns a :class:`GateResult` whose findings explain every failure
with its numbers.

1. **self-test**: the metric math gives known answers (:mod:`ragaudit.gates.selftest`; the gate below);
2. **quality**: floors and significant regressions against a baseline (:mod:`ragaudit.gates.quality`);
3. **security**: cross-tenant leaks within ``max_leaks``, and tenant isolation verified by a clean
   audit of the same system and corpus (:mod:`ragaudit.gates.security`, :mod:`ragaudit.gates.audit_tie`);
4. **operations**: latency p95 within its budget and failed cases within ``max_error_rate``
   (:mod:`ragaudit.gates.operations`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ragaudit.errors import InputError
from ragaudit.gates.leaks import describe_leak
from ragaudit.gates.operations import operations_gate
from ragaudit.gates.quality import quality_gate
from ragaudit.gates.result import WORST, GateResult, Status, floor_failure, fmt_score, worst_queries
from ragaudit.gates.security import security_gate
from ragaudit.gates.selftest import run_selftest

__all__ = [
    "WORST",
    "GateResult",
    "Status",
    "describe_leak",
    "floor_failure",
    "fmt_score",
    "load_json",
    "operations_gate",
    "quality_gate",
    "security_gate",
    "selftest_gate",
    "worst_queries",
]


def selftest_gate() -> GateResult:
    report = run_selftest()
    total = len(report.checks)
    numbers = {"checks": total, "failed": len(report.failures), "seconds": round(report.seconds, 4)}
    if report.passed:
        return GateResult(
            "self-test",
            "pass",
            f"{total}/{total} known-answer metric checks pass (pure and bulk)",
            numbers=numbers,
        )
    return GateResult(
        "self-test",
        "fail",
        f"{len(report.failures)} of {total} metric checks FAIL: this installation computes wrong numbers",
        tuple(f"{c.name}: {c.detail}" for c in report.failures),
        numbers=numbers,
    )


def load_json(path: str | Path, what: str) -> dict[str, Any]:
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(str(p), None, f"{what} not found", "check the path") from None
    except json.JSONDecodeError as exc:
        raise InputError(
            str(p), exc.lineno, f"not valid JSON: {exc.msg}", f"pass the {what} ragaudit wrote"
        ) from None
    if not isinstance(data, dict):
        raise InputError(str(p), None, f"a {what} must be a JSON object", f"pass the {what} ragaudit wrote")
    return data
