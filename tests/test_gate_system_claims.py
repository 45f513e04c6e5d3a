"""The audit-to-report tie rests on more than a name: an eval report of one system whose ``pipeline``
block names the audited system is caught by its own records (before: a report of 24-token chunks whose
``config_sha256``, or whole ``pipeline`` block, was swapped for the audited BM25's passed the security
gate, "verified by audit").

The honest twin: the report of the audited system passes."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from conftest import KB
from ragaudit.cli.main import main
from ragaudit.evaluation.compare import LoadedReport
from ragaudit.gates.checks import security_gate
from ragaudit.gates.policy import GatePolicy
from test_gate_forged_audits import CLEAN

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, Any]]:
    out = tmp_path_factory.mktemp("tie")
    made = {}
    for name, spec in (("bm25", "bm25"), ("chunked", str(ROOT / "examples" / "ci_gate" / "chunked_24.toml"))):
        path = out / f"{name}.json"
        argv = ["eval", "--dataset", str(KB / "golden.jsonl"), "--corpus", str(KB / "corpus.jsonl"),
                "--pipeline", spec, "--metrics", "nDCG@10", "--out", str(path), "--no-history", "--no-progress"]  # fmt: skip
        assert main(argv) == 0
        made[name] = json.loads(path.read_text(encoding="utf-8"))
    return made


def _audit_of(report: dict[str, Any]) -> dict[str, Any]:
    """A clean audit (as large as the default floor asks) of the system and corpus ``report`` names."""
    audit = copy.deepcopy(CLEAN)
    audit["source"] = {"pipeline": copy.deepcopy(report["pipeline"])}
    audit["corpus"] = {"sha256": report["corpus"]["sha256"], "tenants": ["acme", "globex"]}
    return audit


def _gate(report: dict[str, Any], audit: dict[str, Any]) -> tuple[str, str]:
    gate = security_gate(LoadedReport("eval", "eval.json", report), GatePolicy(), [("audit.json", audit)])
    return gate.status, gate.summary


def test_the_report_of_the_audited_system_passes(reports: dict[str, dict[str, Any]]) -> None:
    bm25 = reports["bm25"]
    assert _gate(bm25, _audit_of(bm25))[0] == "pass"


def test_a_swapped_system_name_is_caught_by_the_reports_own_records(
    reports: dict[str, dict[str, Any]],
) -> None:
    bm25, chunked = reports["bm25"], reports["chunked"]
    audit = _audit_of(bm25)
    only_sha = copy.deepcopy(chunked)
    only_sha["pipeline"]["config_sha256"] = bm25["pipeline"]["config_sha256"]
    status, why = _gate(only_sha, audit)
    assert status == "not_verified" and "is not the sha256 of the config written beside it" in why
    config_too = copy.deepcopy(only_sha)
    config_too["pipeline"]["config"] = bm25["pipeline"]["config"]
    status, why = _gate(config_too, audit)
    assert status == "not_verified"
    assert f"pipeline built {chunked['pipeline']['chunks']} chunks and the audit's 90" in why
    whole_block = copy.deepcopy(chunked)
    whole_block["pipeline"] = copy.deepcopy(bm25["pipeline"])
    status, why = _gate(whole_block, audit)
    assert status == "not_verified" and "are not made by the chunking its pipeline config names (whole" in why
