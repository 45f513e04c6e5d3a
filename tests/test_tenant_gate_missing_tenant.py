"""A tenant the baseline has no case of is not compared: the tenants gate must say so (NOT VERIFIED,
naming the tenant), never pass on the tenants it could compare while the missing one goes unseen."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import ragaudit
from ragaudit.evaluation.compare import load_report
from ragaudit.evaluation.slices import tenant_comparisons
from ragaudit.gates.policy import load_policy
from ragaudit.gates.verdict import run_gates

KB = Path(ragaudit.__file__).parent / "demo_data" / "kb" / "golden.jsonl"


def _ideal(case: dict[str, Any]) -> list[str]:
    grades = case.get("relevance", {})
    return sorted(grades, key=lambda d: (-grades[d], d))


def _reports(folder: Path) -> tuple[Path, Path]:
    cases = [json.loads(line) for line in KB.read_text(encoding="utf-8").splitlines() if line.strip()]
    run = {c["id"]: _ideal(c) for c in cases}
    base, candidate = folder / "base.json", folder / "candidate.json"
    ragaudit.evaluate(KB, run, metrics="nDCG@10").write_json(base)
    ragaudit.evaluate(KB, run, metrics="nDCG@10").write_json(candidate)
    data = json.loads(base.read_text(encoding="utf-8"))  # the baseline lost every acme case
    data["per_case"] = [c for c in data["per_case"] if c.get("tenant_id") != "acme"]
    base.write_text(json.dumps(data), encoding="utf-8")
    return base, candidate


def test_a_tenant_only_the_candidate_has_is_a_row_with_no_paired_case(tmp_path: Path) -> None:
    base, candidate = _reports(tmp_path)
    section = tenant_comparisons(load_report(base), [load_report(candidate)], ["nDCG@10"], n_resamples=200)
    rows = {r["tenant"]: r for r in section["rows"]}
    assert sorted(rows) == ["acme", "globex", "initech"]
    assert rows["acme"]["n"] == 0 and not rows["acme"]["enough"] and not rows["acme"]["significant"]


def test_the_tenants_gate_is_not_verified_when_the_baseline_lacks_a_tenant(tmp_path: Path) -> None:
    base, candidate = _reports(tmp_path)
    policy_file = tmp_path / "gates.toml"
    policy_file.write_text(
        "[quality]\nmax_tenant_regression = 0.05\n[security]\nallow_unverified = true\n", encoding="utf-8"
    )
    verdict = run_gates(candidate, load_policy(policy_file), baseline_path=base, resamples=200)
    tenants = next(g for g in verdict.gates if g.gate == "tenants")
    assert tenants.status == "not_verified" and not verdict.passed and verdict.exit_code == 1
    assert tenants.findings == (
        "tenant acme: 0 paired case(s) for nDCG@10, too few cases to judge a regression (min_tenant_cases 5)",
    )
