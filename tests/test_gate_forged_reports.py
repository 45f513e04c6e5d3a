"""A report edited by hand never passes the gate (before: each of these exited 0 with PASS).

Every forgery below starts from a report ``ragaudit.evaluate`` wrote (the honest twin, which passes)
and edits it the way a careless platform team or someone gaming CI would: the worst or failed cases
removed (with the means, and even the counts, made to match), a case listed twice so its better copy
wins, a per-case value blanked so the mean skips it, the security summary zeroed or removed while the
cases still record a leak, another kind of report given as an eval report."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import ragaudit
from ragaudit.errors import InputError
from ragaudit.gates.policy import load_policy
from ragaudit.gates.verdict import Verdict, run_gates

CASES = 12
GOLDEN = "".join(
    f'{{"id": "q{i:02d}", "query": "question {i}", "tenant_id": "acme", "relevance": {{"d{i}": 1}}}}\n'
    for i in range(CASES)
)
MISSED = 4  # q00..q03 rank their relevant document last: reciprocal rank 0.2


def _run() -> dict[str, list[str]]:
    return {
        f"q{i:02d}": ([f"x{i}a", f"x{i}b", f"x{i}c", f"x{i}d", f"d{i}"] if i < MISSED else [f"d{i}"])
        for i in range(CASES)
    }


def _honest(tmp_path: Path) -> dict[str, Any]:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    path = tmp_path / "honest.json"
    ragaudit.evaluate(golden, _run(), metrics="MRR").write_json(path)
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


def _gate(tmp_path: Path, data: dict[str, Any], baseline: dict[str, Any] | None = None) -> Verdict:
    policy = tmp_path / "gates.toml"
    policy.write_text(
        '[quality]\nfloors = { "MRR" = 0.80 }\n[security]\nallow_unverified = true\n', encoding="utf-8"
    )
    report = tmp_path / "report.json"
    report.write_text(json.dumps(data), encoding="utf-8")
    base = None
    if baseline is not None:
        base = tmp_path / "baseline.json"
        base.write_text(json.dumps(baseline), encoding="utf-8")
    return run_gates(report, load_policy(policy), baseline_path=base, resamples=1000)


def _remean(data: dict[str, Any]) -> None:
    values = {c["id"]: c["metrics"]["MRR"] for c in data["per_case"] if c["status"] != "unanswerable"}
    data["metrics"]["MRR"] = sum(values.values()) / len(values)


def _drop_worst(data: dict[str, Any]) -> None:
    data["per_case"] = [c for c in data["per_case"] if c["metrics"]["MRR"] == 1.0]
    _remean(data)


def _drop_worst_fix_counts(data: dict[str, Any]) -> None:
    _drop_worst(data)
    n = len(data["per_case"])
    data["dataset"]["cases"] = data["counts"]["cases"] = data["counts"]["answerable"] = n


def _duplicate_better(data: dict[str, Any]) -> None:
    better = [copy.deepcopy(c) for c in data["per_case"] if c["metrics"]["MRR"] < 1.0]
    for case in better:
        case["metrics"]["MRR"] = 1.0
    data["per_case"] += better
    _remean(data)


def _blank_worst(data: dict[str, Any]) -> None:
    kept = [c for c in data["per_case"] if c["metrics"]["MRR"] == 1.0]
    for case in data["per_case"]:
        if case["metrics"]["MRR"] < 1.0:
            case["metrics"]["MRR"] = None
    data["metrics"]["MRR"] = sum(c["metrics"]["MRR"] for c in kept) / len(kept)


def _hidden_leak(data: dict[str, Any]) -> None:
    case = data["per_case"][-1]
    case["leaks"] = [
        {"chunk_id": "globex-secret", "rank": 1, "claimed_tenant": "globex", "caller_tenant": "acme"}
    ]


def _no_security(data: dict[str, Any]) -> None:
    _hidden_leak(data)
    del data["security"]


FORGERIES: dict[str, tuple[Callable[[dict[str, Any]], None], str, str]] = {
    "worst cases removed": (_drop_worst, "quality", "case(s) but says it has"),
    "worst cases removed, counts edited": (
        _drop_worst_fix_counts,
        "quality",
        "no record of 4 case(s) of its golden set",
    ),
    "a case listed twice": (_duplicate_better, "quality", "listed more than once: q00, q01, q02 ..."),
    "per-case values blanked": (_blank_worst, "quality", "4 answerable case(s) have no finite value"),
    "leak summary zeroed": (_hidden_leak, "security", "its cases record 1 cross-tenant chunk(s)"),
    "security section removed": (_no_security, "security", "has no security section"),
}


def test_the_honest_report_passes(tmp_path: Path) -> None:
    data = _honest(tmp_path)
    data["metrics"]["MRR"] = 1.0  # the twin the forgeries aim for: every case found at rank 1
    for case in data["per_case"]:
        case["metrics"]["MRR"] = 1.0
    verdict = _gate(tmp_path, data, baseline=_honest(tmp_path))
    assert verdict.passed and verdict.exit_code == 0, [g.to_json() for g in verdict.gates]
    assert {g.gate: g.status for g in verdict.gates}["quality"] == "pass"


def test_the_unedited_report_fails_its_floor_for_its_own_reason(tmp_path: Path) -> None:
    verdict = _gate(tmp_path, _honest(tmp_path))
    quality = next(g for g in verdict.gates if g.gate == "quality")
    assert not verdict.passed and quality.findings[0].startswith("MRR 0.73 < floor 0.80")


@pytest.mark.parametrize("name", FORGERIES)
def test_a_forged_report_does_not_pass(tmp_path: Path, name: str) -> None:
    forge, gate, words = FORGERIES[name]
    data = _honest(tmp_path)
    forge(data)
    verdict = _gate(tmp_path, data)
    failed = next(g for g in verdict.gates if g.gate == gate)
    assert not verdict.passed and verdict.exit_code == 1
    assert failed.status == "fail" and any(words in f for f in failed.findings), failed.findings


def test_cases_removed_from_a_moved_report_are_caught_by_the_baseline(tmp_path: Path) -> None:
    data = _honest(tmp_path)
    baseline = copy.deepcopy(data)
    _drop_worst_fix_counts(data)
    data["dataset"]["path"] = str(tmp_path / "elsewhere" / "golden.jsonl")  # the golden file cannot vouch
    verdict = _gate(tmp_path, data, baseline=baseline)
    quality = next(g for g in verdict.gates if g.gate == "quality")
    assert not verdict.passed
    assert any("no record of 4 case(s) the baseline lists" in f for f in quality.findings), quality.findings


def test_a_report_of_another_kind_is_not_an_eval_report(tmp_path: Path) -> None:
    data = _honest(tmp_path)
    data["kind"] = "tenant-audit"
    with pytest.raises(InputError, match="not a ragaudit eval report \\(a 'tenant-audit' report\\)"):
        _gate(tmp_path, data)


def test_a_baseline_with_its_best_cases_removed_fails_the_regression_check(tmp_path: Path) -> None:
    """A baseline made to look worse (its best cases removed) would hide any regression against it."""
    data = _honest(tmp_path)
    baseline = copy.deepcopy(data)
    baseline["per_case"] = [c for c in baseline["per_case"] if c["metrics"]["MRR"] < 1.0]
    _remean(baseline)
    verdict = _gate(tmp_path, data, baseline=baseline)
    quality = next(g for g in verdict.gates if g.gate == "quality")
    assert not verdict.passed
    assert any(f.startswith("baseline ") and "case(s) but says it has" in f for f in quality.findings)


def test_the_python_api_refuses_a_dict_of_another_kind(tmp_path: Path) -> None:
    data = _honest(tmp_path)
    assert ragaudit.gate(data, {"security": {"allow_unverified": True}}).passed  # the twin
    with pytest.raises(InputError, match="a 'tenant-audit' report"):
        ragaudit.gate({**data, "kind": "tenant-audit"}, {"security": {"allow_unverified": True}})


def test_the_report_as_its_own_baseline_compares_nothing(tmp_path: Path) -> None:
    """Before: the candidate gated against itself (or a copy of it) read "1 paired comparison(s) met"."""
    data = _honest(tmp_path)
    data["metrics"]["MRR"] = 1.0
    for case in data["per_case"]:
        case["metrics"]["MRR"] = 1.0
    verdict = _gate(tmp_path, data, baseline=copy.deepcopy(data))
    quality = next(g for g in verdict.gates if g.gate == "quality")
    assert not verdict.passed and any("is this report itself" in f for f in quality.findings)
    earlier = {**copy.deepcopy(data), "created_at": "2026-01-01T00:00:00+00:00"}  # an earlier run: the twin
    assert _gate(tmp_path, data, baseline=earlier).passed


def test_a_latency_p95_edited_below_its_cases_fails_the_budget(tmp_path: Path) -> None:
    from ragaudit.evaluation.result import percentile
    from ragaudit.gates.policy import GatePolicy

    data = _honest(tmp_path)
    for i, case in enumerate(data["per_case"]):
        case["latency_ms"] = 100.0 * (i + 1)
    values = [c["latency_ms"] for c in data["per_case"]]
    data["latency_ms"] = {
        "p50": percentile(values, 50),
        "p95": percentile(values, 95),
        "p99": 1200.0,
        "mean": 650.0,
    }
    policy = GatePolicy(latency_p95_ms=1200, allow_unverified=True)
    path = tmp_path / "timed.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    assert run_gates(path, policy, resamples=1000).passed  # the twin: p95 1145 ms, within 1200
    data["latency_ms"]["p95"] = 80.0
    path.write_text(json.dumps(data), encoding="utf-8")
    operations = next(g for g in run_gates(path, policy, resamples=1000).gates if g.gate == "operations")
    assert operations.status == "fail"
    assert "states a latency p95 of 80 ms but its 12 cases' latencies give 1145 ms" in operations.summary


@pytest.mark.parametrize("in_sample", [False, True])
def test_inconsistent_case_records_fail_the_quality_gate_once(tmp_path: Path, in_sample: bool) -> None:
    """The check lives in the quality gate (also for an IN-SAMPLE report, which would otherwise stop at
    NOT VERIFIED); the operations gate does not repeat its findings, and does not pass on such records."""
    data = _honest(tmp_path)
    _drop_worst_fix_counts(data)
    if in_sample:
        data["in_sample"] = {"state": "in_sample", "stage": "fusion weights", "text": "IN-SAMPLE"}
    verdict = _gate(tmp_path, data)
    gates = {g.gate: g for g in verdict.gates}
    assert not verdict.passed and verdict.exit_code == 1
    assert gates["quality"].status == "fail"
    assert any("no record of 4 case(s) of its golden set" in f for f in gates["quality"].findings)
    assert gates["operations"].status == "not_verified" and not gates["operations"].findings
    assert "quality gate" in gates["operations"].summary
