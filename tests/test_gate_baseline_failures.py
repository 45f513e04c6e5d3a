"""A ``--baseline`` whose cases failed (errors or missing: each scores 0) hides a candidate's regression:
against a failed case any candidate looks better. The regression check leaves the cases that failed in
the baseline out of the paired test and says so (before: a candidate 0.30 worse on the cases the
baseline answered passed the quality gate, its mean "improving" by +0.13). The honest twin: a baseline
whose run did not fail is compared on every case, with no note."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ragaudit
from ragaudit.data.run import CaseRun, RankedItem, Run
from ragaudit.gates.policy import parse_policy
from ragaudit.gates.verdict import run_gates

CASES = 30
FAILED = 10  # q00..q09 time out in the baseline run
REGRESSED = 12  # q10..q21: the candidate ranks the relevant document second
GOLDEN = "".join(
    json.dumps({"id": f"q{i:02d}", "query": f"question {i}", "relevant_chunk_ids": [f"d{i:02d}"]}) + "\n"
    for i in range(CASES)
)
POLICY = parse_policy({"quality": {"max_regression": 0.02}, "security": {"allow_unverified": True}})


def _case(i: int, rank: int) -> CaseRun:
    ids = [f"other{i:02d}-{n}" for n in range(rank - 1)] + [f"d{i:02d}"]
    return CaseRun([RankedItem(chunk, score=1.0 / (n + 1)) for n, chunk in enumerate(ids)], latency_ms=1.0)


def _report(tmp_path: Path, name: str, run: Run) -> Path:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    path = tmp_path / f"{name}.json"
    ragaudit.evaluate(golden, run, metrics="MRR").write_json(path)
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    data["created_at"] = f"2026-12-05T00:00:0{len(name) % 10}Z"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _candidate(tmp_path: Path) -> Path:
    cases = {f"q{i:02d}": _case(i, 2 if FAILED <= i < FAILED + REGRESSED else 1) for i in range(CASES)}
    return _report(tmp_path, "candidate", Run(cases, name="candidate"))


def test_a_failed_baseline_does_not_hide_a_regression(tmp_path: Path) -> None:
    cases = {
        f"q{i:02d}": CaseRun(error="timeout after 30s", latency_ms=1.0) if i < FAILED else _case(i, 1)
        for i in range(CASES)
    }
    baseline = _report(tmp_path, "baseline", Run(cases, name="baseline"))
    quality = run_gates(_candidate(tmp_path), POLICY, baseline_path=baseline, resamples=2000).gates[1]
    assert quality.gate == "quality" and quality.status == "fail"
    assert any("MRR" in f and "significant regression" in f for f in quality.findings)
    assert any(
        "10 case(s) failed in the baseline" in n and "left out of the paired check" in n
        for n in quality.notes
    )


def test_an_honest_baseline_is_compared_on_every_case(tmp_path: Path) -> None:
    baseline = _report(tmp_path, "baseline", Run({f"q{i:02d}": _case(i, 1) for i in range(CASES)}, name="b"))
    quality = run_gates(_candidate(tmp_path), POLICY, baseline_path=baseline, resamples=2000).gates[1]
    assert quality.status == "fail"  # the same regression, now over 30 pairs
    assert not any("failed in the baseline" in n for n in quality.notes)
    same = run_gates(baseline, POLICY, baseline_path=baseline, resamples=2000).gates[1]
    assert same.status == "fail"  # compared with itself: nothing compared (the existing rule)


def test_a_baseline_whose_every_case_failed_compares_nothing(tmp_path: Path) -> None:
    cases = {f"q{i:02d}": CaseRun(error="connection refused", latency_ms=1.0) for i in range(CASES)}
    baseline = _report(tmp_path, "baseline", Run(cases, name="baseline"))
    quality = run_gates(_candidate(tmp_path), POLICY, baseline_path=baseline, resamples=2000).gates[1]
    assert quality.status == "fail"
    assert any("the regression check compared nothing" in f for f in quality.findings)


def test_the_tenants_gate_leaves_the_baselines_failed_cases_out_too(tmp_path: Path) -> None:
    cases = {
        f"q{i:02d}": CaseRun(error="timeout after 30s", latency_ms=1.0) if i < FAILED else _case(i, 1)
        for i in range(CASES)
    }
    baseline = _report(tmp_path, "baseline", Run(cases, name="baseline"))
    policy = parse_policy(
        {"quality": {"max_tenant_regression": 0.02}, "security": {"allow_unverified": True}}
    )
    gates = run_gates(_candidate(tmp_path), policy, baseline_path=baseline, resamples=2000).gates
    tenants = next(g for g in gates if g.gate == "tenants")
    assert tenants.status == "fail" and any("significant regression" in f for f in tenants.findings)
    assert any("10 case(s) failed in the baseline" in n for n in tenants.notes)
