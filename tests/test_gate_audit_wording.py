"""The gate names the audited system in full when it is an endpoint (two services on one host differ by
port, which a cut name hid), its fix for an audit of another system is to audit this one, and an audit
verifies nothing for a report that names no system (a run-file evaluation): nothing ties the two."""

from __future__ import annotations

import json
from pathlib import Path

import ragaudit
from ragaudit.gates.policy import load_policy
from ragaudit.gates.verdict import run_gates

GOLDEN = "".join(f'{{"id": "q{i}", "query": "x", "relevance": {{"d{i}": 1}}}}\n' for i in range(6))


def test_an_audit_of_another_endpoint_is_named_with_its_port(tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    report = tmp_path / "report.json"
    ragaudit.evaluate(golden, {f"q{i}": [f"d{i}"] for i in range(6)}, metrics="MRR").write_json(report)
    data = json.loads(report.read_text(encoding="utf-8"))
    data["source"] = {"endpoint": "http://localhost:8001/search"}
    report.write_text(json.dumps(data), encoding="utf-8")
    audit = tmp_path / "audit.json"
    isolation = {
        "check": "tenant isolation",
        "state": "pass",
        "reason": "no foreign chunk served",
        "verified": 9,
    }
    audit.write_text(
        json.dumps(
            {
                "kind": "tenant-audit",
                "passed": True,
                "verdict": "clean",
                "leaks": {"count": 0},
                "isolation": isolation,
                "source": {"endpoint": "http://localhost:8002/search"},
            }
        ),
        encoding="utf-8",
    )
    policy = tmp_path / "gates.toml"
    policy.write_text('[quality]\nfloors = { "MRR" = 0.5 }\n', encoding="utf-8")
    verdict = run_gates(report, load_policy(policy), audit_paths=[audit])
    security = next(g for g in verdict.gates if g.gate == "security")
    assert security.status == "not_verified" and not verdict.passed
    assert (
        "it audited another system (endpoint http://localhost:8002/search, the report evaluated endpoint "
        "http://localhost:8001/search)" in security.summary
    )
    assert any("on the system and corpus this report evaluated" in n for n in security.notes)


def test_a_run_file_report_is_not_verified_by_an_audit_of_some_system(tmp_path: Path) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    report = tmp_path / "report.json"
    ragaudit.evaluate(golden, {f"q{i}": [f"d{i}"] for i in range(6)}, metrics="MRR").write_json(report)
    audit = tmp_path / "audit.json"
    isolation = {
        "check": "tenant isolation",
        "state": "pass",
        "reason": "no foreign chunk served",
        "verified": 9,
    }
    audit.write_text(
        json.dumps({"kind": "tenant-audit", "passed": True, "verdict": "clean", "leaks": {"count": 0},
                    "isolation": isolation, "source": {"pipeline": {"config_sha256": "a" * 64}}}),
        encoding="utf-8",
    )  # fmt: skip
    policy = tmp_path / "gates.toml"
    policy.write_text('[quality]\nfloors = { "MRR" = 0.5 }\n', encoding="utf-8")
    verdict = run_gates(report, load_policy(policy), audit_paths=[audit])
    security = next(g for g in verdict.gates if g.gate == "security")
    assert security.status == "not_verified" and not verdict.passed
    assert "the eval report names no system" in security.summary
    assert "allow_unverified = true" in security.summary
    policy.write_text(
        '[quality]\nfloors = { "MRR" = 0.5 }\n[security]\nallow_unverified = true\n', encoding="utf-8"
    )
    waived = run_gates(report, load_policy(policy), audit_paths=[audit])
    security = next(g for g in waived.gates if g.gate == "security")
    assert security.status == "not_verified" and "allowed by the policy" in security.summary


def test_an_eval_report_given_as_the_audit_is_named_as_not_an_audit() -> None:
    """``gate --audit eval.json`` said "its verdict is 'not clean'" (an eval report has no audit verdict):
    the kind is checked first and named."""
    from ragaudit.gates.audit_tie import audit_unverified

    why = audit_unverified({"kind": "eval", "passed": True})
    assert why == "it is a 'eval' report, not a tenant audit ('ragaudit audit-tenants --out')"
    assert audit_unverified({"kind": "eval"}) == why  # with no verdict at all, the same reason
