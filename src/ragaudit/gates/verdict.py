"""Run all four gates on one eval report and give the verdict: text for CI logs, JSON (kind ``gate``)
for machines, and the exit code (0 every gate passed or had nothing to check, 1 a gate failed or could
not verify what it guards; a ``not verified`` the policy waived does not block but still prints as such).

The overall verdict has three states: ``pass``, ``fail`` (a gate failed) and ``not_verified`` (nothing
failed, but a gate could not verify what it guards)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragaudit.artifacts.envelope import envelope, write_artifact
from ragaudit.evaluation.compare import LoadedReport, load_report
from ragaudit.evaluation.integrity import case_inconsistencies
from ragaudit.gates.checks import (
    GateResult,
    load_json,
    operations_gate,
    quality_gate,
    security_gate,
    selftest_gate,
)
from ragaudit.gates.policy import GatePolicy
from ragaudit.gates.tenants import tenants_gate

PASS, FAIL = 0, 1


@dataclass(frozen=True)
class Verdict:
    gates: tuple[GateResult, ...]
    report: str
    policy: GatePolicy
    baseline: str | None = None
    audits: tuple[str, ...] = ()
    dataset_sha256: str | None = None

    @property
    def passed(self) -> bool:
        return all(g.passed for g in self.gates)

    @property
    def state(self) -> str:
        """``fail`` when a gate failed, else ``not_verified`` when a gate could not verify, else ``pass``."""
        if any(g.status == "fail" for g in self.gates):
            return "fail"
        return "not_verified" if any(g.status == "not_verified" for g in self.gates) else "pass"

    @property
    def exit_code(self) -> int:
        return PASS if self.passed else FAIL

    def to_dict(self) -> dict[str, Any]:
        """The verdict as a report of kind ``gate``; its ``passed`` and ``gates`` also form the ``gate``
        section a report can carry (``report["gate"] = verdict.to_dict()``) for the Markdown/HTML views."""
        return {
            **envelope("gate", dataset={"sha256": self.dataset_sha256}),
            "passed": self.passed,
            "verdict": self.state,
            "exit_code": self.exit_code,
            "report": self.report,
            "baseline": self.baseline,
            "audits": list(self.audits),
            "policy": self.policy.to_dict(),
            "gates": [g.to_json() for g in self.gates],
        }

    def write_json(self, path: str | Path) -> None:
        """The verdict as strict JSON (:func:`ragaudit.artifacts.envelope.write_artifact`)."""
        write_artifact(self.to_dict(), path)


def run_gates(
    report_path: str | Path | LoadedReport,
    policy: GatePolicy,
    *,
    baseline_path: str | Path | LoadedReport | None = None,
    audit_paths: Sequence[str | Path | tuple[str, Mapping[str, Any]]] = (),
    resamples: int = 10_000,
    seed: int = 0,
) -> Verdict:
    """Load the reports (paths, or reports already loaded; an audit as ``(name, report dict)``) and run the
    self-test, quality, security and operations gates, in that order (and the tenants gate after
    quality when the policy sets a per-tenant floor or ``max_tenant_regression``)."""
    report = report_path if isinstance(report_path, LoadedReport) else load_report(report_path)
    baseline = (
        baseline_path
        if isinstance(baseline_path, LoadedReport) or baseline_path is None
        else load_report(baseline_path)
    )
    audits = [
        p if isinstance(p, tuple) else (str(p), load_json(p, "tenant-audit report")) for p in audit_paths
    ]
    problems = case_inconsistencies(report.data)  # worked out once; quality reports, operations defers
    gates = (
        selftest_gate(),
        quality_gate(report, policy, baseline, resamples=resamples, seed=seed, case_problems=problems),
        *(
            [tenants_gate(report, policy, baseline, resamples=resamples, seed=seed)]
            if policy.by_tenant
            else []
        ),
        security_gate(report, policy, audits),
        operations_gate(report, policy, problems),
    )
    return Verdict(
        gates,
        report.path,
        policy,
        baseline.path if baseline is not None else None,
        tuple(name for name, _ in audits),
        report.dataset_sha or None,
    )
