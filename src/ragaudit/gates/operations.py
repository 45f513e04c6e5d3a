"""The operations gate: latency p95 within its budget, and the share of failed cases (errors and cases
the run has no result for) within ``max_error_rate``, which is 0 when the policy sets none: a run whose
cases failed is not a passing run. A report where no case could be scored fails. A budget the report
cannot be checked against (no latency in a run-file evaluation) fails: an unmeasured budget is not a
met one."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ragaudit.data.run import MISSING
from ragaudit.evaluation.compare import LoadedReport
from ragaudit.evaluation.integrity import case_inconsistencies, latency_inconsistency
from ragaudit.evaluation.outcome import report_outcome
from ragaudit.gates.policy import GatePolicy
from ragaudit.gates.result import GateResult

UNACCOUNTED = (
    "the report's case records do not account for its cases (the quality gate fails on them and says "
    "why), so the failed cases counted from them may not be all of the run's"
)


def operations_gate(
    report: LoadedReport, policy: GatePolicy, case_problems: Sequence[str] | None = None
) -> GateResult:
    """Latency p95 within its budget (when the policy sets one), and the run's failed cases within
    ``max_error_rate``: always checked, with 0 when the policy sets none (a run whose cases failed is
    not a passing run). Failed cases are counted as ``ragaudit eval`` counts them
    (:mod:`ragaudit.evaluation.outcome`): errors, and cases the run has no result for (``missing``);
    a report where no case could be scored, or that shares no case with its dataset, fails too. When
    its case records do not account for its cases (``case_problems``, else worked out here), the failed
    cases counted from them are NOT VERIFIED; the quality gate fails on and lists those problems."""
    findings: list[str] = []
    numbers: dict[str, Any] = {}
    parts: list[str] = []
    if policy.latency_p95_ms is not None:
        latency = report.data.get("latency_ms")
        p95 = latency.get("p95") if isinstance(latency, Mapping) else None
        numbers["latency_p95_ms"] = {"value": p95, "budget": policy.latency_p95_ms}
        if edited := latency_inconsistency(report.data):
            findings.append(edited)
        elif not isinstance(p95, (int, float)):
            findings.append(
                "latency p95 has a budget but the report has no latency (a run-file evaluation measures none); "
                "evaluate the live system (--pipeline, --endpoint or --retriever) or drop latency_p95_ms"
            )
        elif p95 > policy.latency_p95_ms:
            findings.append(f"latency p95 {p95:.1f} ms > budget {policy.latency_p95_ms:g} ms")
        else:
            parts.append(f"latency p95 {p95:.1f} ms <= {policy.latency_p95_ms:g} ms")
    budget = policy.max_error_rate if policy.max_error_rate is not None else 0.0
    unset = "" if policy.max_error_rate is not None else " (no max_error_rate: none tolerated)"
    outcome = report_outcome(report.data, f"report {report.path}", "report")
    missing = sum(1 for _, reason in outcome.failures if reason == MISSING)
    errors = len(outcome.failures) - missing
    cases = outcome.total
    rate = outcome.rate if cases else math.nan
    numbers["error_rate"] = {
        "value": rate,
        "errors": errors,
        "missing": missing,
        "cases": cases,
        "budget": budget,
        "budget_set": policy.max_error_rate is not None,
    }
    failed = f"{errors} errors" + (f" + {missing} missing" if missing else "")
    if outcome.failures and outcome.rate > budget:
        shown = ", ".join(f"{cid}: {reason}" for cid, reason in outcome.failures[:3])
        findings.append(
            f"error rate {rate:.4f} ({failed} / {cases} cases) > budget {budget:g}{unset}; e.g. {shown}"
        )
    else:
        parts.append(f"error rate {rate:.4f} ({len(outcome.failures)}/{cases}) <= {budget:g}{unset}")
    findings += outcome.problems(1.0)  # nothing scored, no case shared: whatever the budget
    if findings:
        return GateResult("operations", "fail", "; ".join(findings), tuple(findings), numbers=numbers)
    if case_problems is None:
        case_problems = case_inconsistencies(report.data)
    if case_problems:  # removed cases hide their failures; the quality gate fails on them
        return GateResult(
            "operations",
            "not_verified",
            f"error rate NOT VERIFIED: {UNACCOUNTED}",
            notes=(UNACCOUNTED,),
            numbers=numbers,
        )
    return GateResult("operations", "pass", "; ".join(parts), numbers=numbers)
