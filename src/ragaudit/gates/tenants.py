"""The tenants gate: per-tenant floors and "no tenant regresses by more than X", which a mean over every
tenant cannot see (one tenant of three dropping by 0.30 while the others improve leaves the overall mean
where it was). It runs when the policy sets ``[quality] per_tenant_floors`` or ``max_tenant_regression``.

* **floors**: each tenant's mean over its answerable cases reaches the tenant's floor (the tenant ``"*"``:
  every tenant of the report);
* **regression**: against ``--baseline``, per tenant and metric, the paired randomization test over the
  tenant's paired cases, Holm-corrected across every tenant x metric (:func:`ragaudit.evaluation.slices.
  tenant_comparisons`); a drop counts when it exceeds ``max_tenant_regression`` **and** is significant
  at ``alpha`` (as the overall regression check counts one);
* a tenant with fewer than ``min_tenant_cases`` answerable (or paired) cases is **too few cases to
  judge**: the gate is NOT VERIFIED naming it, never a silent pass.

Every finding names the tenant.
"""

from __future__ import annotations

import math
from typing import Any

from ragaudit.evaluation.compare import LoadedReport, case_values
from ragaudit.evaluation.slices import cases_by_tenant, tenant_comparisons
from ragaudit.gates.baseline_failures import answered_by_baseline
from ragaudit.gates.policy import GatePolicy
from ragaudit.gates.result import GateResult, floor_failure, judge_drop

WILDCARD = "*"


def _floors(
    report: LoadedReport, policy: GatePolicy
) -> tuple[list[str], list[str], dict[str, dict[str, Any]]]:
    groups = cases_by_tenant(report.data.get("per_case", []))
    wanted: dict[str, dict[str, float]] = {}
    for tenant, floors in policy.per_tenant_floors.items():
        for name in groups if tenant == WILDCARD else [tenant]:
            wanted.setdefault(name, {}).update(floors)
    for tenant, floors in policy.per_tenant_floors.items():  # a named tenant's own floor beats "*"
        if tenant != WILDCARD:
            wanted[tenant].update(floors)
    findings: list[str] = []
    unjudged: list[str] = []
    numbers: dict[str, dict[str, Any]] = {}
    for tenant, floors in sorted(wanted.items()):
        cases = groups.get(tenant, [])
        if not cases:
            findings.append(
                f"tenant {tenant}: has a floor but the report has no answerable case of it "
                f"(tenants: {', '.join(groups) or 'none'}); check the tenant name or the golden set"
            )
            continue
        if len(cases) < policy.min_tenant_cases:
            unjudged.append(
                f"tenant {tenant}: {len(cases)} answerable case(s), too few cases to judge its floors "
                f"(min_tenant_cases {policy.min_tenant_cases}); add golden cases for it or lower min_tenant_cases"
            )
            continue
        for metric, floor in floors.items():
            values = case_values(cases, metric)
            mean = math.fsum(values.values()) / len(values) if values else None
            numbers.setdefault(tenant, {})[metric] = {"value": mean, "floor": floor, "n": len(values)}
            failure = floor_failure(metric, mean, floor, values)
            if failure:
                findings.append(f"tenant {tenant}: {failure} ({len(values)} cases)")
    return findings, unjudged, numbers


def _metrics_to_compare(report: LoadedReport, baseline: LoadedReport, policy: GatePolicy) -> list[str]:
    shared = [m for m in baseline.metric_names() if m in report.metric_names()]
    tenant_floor_metrics = [m for floors in policy.per_tenant_floors.values() for m in floors]
    wanted = policy.regression_metrics or policy.floors or tenant_floor_metrics or shared
    return [m for m in dict.fromkeys(wanted) if m in shared]


def _regressions(
    report: LoadedReport, baseline: LoadedReport, policy: GatePolicy, resamples: int, seed: int
) -> tuple[list[str], list[str], list[str], dict[str, Any]]:
    tolerance = policy.max_tenant_regression or 0.0
    metrics = _metrics_to_compare(report, baseline, policy)
    if not metrics:
        return (
            [
                "max_tenant_regression: no metric in common with the baseline to compare per tenant; "
                "evaluate both with the same --metrics"
            ],
            [],
            [],
            {},
        )
    answered, paired, left_out = answered_by_baseline(baseline, report)  # its failed cases score 0
    section = tenant_comparisons(
        answered,
        [paired],
        metrics,
        alpha=policy.alpha,
        n_resamples=resamples,
        seed=seed,
        min_cases=policy.min_tenant_cases,
    )
    findings: list[str] = []
    notes: list[str] = [left_out] if left_out else []
    unjudged: list[str] = []
    for row in section["rows"]:
        tenant, metric = row["tenant"], row["metric"]
        if not row["enough"]:
            unjudged.append(
                f"tenant {tenant}: {row['n']} paired case(s) for {metric}, too few cases to judge a regression "
                f"(min_tenant_cases {policy.min_tenant_cases})"
            )
            continue
        label, correction = f"tenant {tenant}: {metric}", section["correction_text"]
        finding, note = judge_drop(row, label, correction, "max_tenant_regression", tolerance, policy.alpha)
        findings += [finding] if finding else []
        notes += [note] if note else []
    return findings, notes, list(dict.fromkeys(unjudged)), section


def tenants_gate(
    report: LoadedReport,
    policy: GatePolicy,
    baseline: LoadedReport | None = None,
    *,
    resamples: int = 10_000,
    seed: int = 0,
) -> GateResult:
    """Per-tenant floors and regressions; fail naming the tenant, not verified when a tenant has too few
    cases to judge, skip when nothing was checked."""
    findings, unjudged, floor_numbers = _floors(report, policy)
    notes: list[str] = []
    comparisons: dict[str, Any] = {}
    if policy.max_tenant_regression is not None and baseline is None:
        notes.append("no --baseline given: the per-tenant regression check did not run")
    elif policy.max_tenant_regression is not None and baseline is not None:
        more, regression_notes, few, comparisons = _regressions(report, baseline, policy, resamples, seed)
        findings += more
        notes += regression_notes
        unjudged += few
    numbers = {
        "floors": floor_numbers,
        "min_tenant_cases": policy.min_tenant_cases,
        "comparisons": [
            {
                k: r[k]
                for k in ("tenant", "metric", "baseline_mean", "system_mean", "delta", "p_value_corrected")
            }
            | {"significant": r["significant"], "n": r["n"], "enough": r["enough"]}
            for r in comparisons.get("rows", [])
        ],
        "correction": comparisons.get("correction_text"),
        "unjudged": unjudged,
    }
    checked_floors = sum(len(v) for v in floor_numbers.values())
    checked_rows = sum(1 for r in comparisons.get("rows", []) if r["enough"])
    checked = f"{checked_floors} tenant floor(s), {checked_rows} per-tenant paired comparison(s)"
    if findings:
        return GateResult(
            "tenants",
            "fail",
            f"{len(findings)} problem(s) in {checked}",
            tuple(findings),
            (*notes, *unjudged),
            numbers,
        )
    if unjudged:
        return GateResult(
            "tenants",
            "not_verified",
            f"tenants NOT VERIFIED: {len(unjudged)} tenant check(s) with too few cases to judge; {checked} met",
            tuple(unjudged),
            tuple(notes),
            numbers,
        )
    if not checked_floors and not checked_rows:
        return GateResult(
            "tenants", "skip", "no per-tenant check could run", notes=tuple(notes), numbers=numbers
        )
    return GateResult("tenants", "pass", f"{checked} met", notes=tuple(notes), numbers=numbers)
