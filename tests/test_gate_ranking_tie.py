"""An audit made with ``--golden`` ties itself to the eval report by its rankings: the report of another
system whose whole ``pipeline`` block was copied from the audited one (the same whole-document
chunking, so the config sha256, the chunk count and the chunk ids all agree) does not take the audit
as its verification (before: BM25 with binary term frequency, named as the audited BM25, passed the
security gate). The honest twins: the audited system's own report passes, and says it is tied by its
rankings; an audit without ``--golden`` still verifies, and the gate's notes say the tie rests on the
name and the corpus alone."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from conftest import KB
from ragaudit.cli.main import main
from ragaudit.evaluation.compare import LoadedReport
from ragaudit.gates.checks import security_gate
from ragaudit.gates.policy import GatePolicy
from ragaudit.gates.ranking_tie import rankings_differ, tie_basis_note

BINARY = Path(__file__).resolve().parents[1] / "examples" / "ci_gate" / "bm25_binary_tf.toml"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("tie")
    data = ["--dataset", str(KB / "golden.jsonl"), "--corpus", str(KB / "corpus.jsonl")]
    assert main(["eval", *data, "--pipeline", "bm25", "--out", str(out / "bm25.json")]) == 0
    assert main(["eval", *data, "--config", str(BINARY), "--out", str(out / "binary.json")]) == 0
    corpus = ["--corpus", str(KB / "corpus.jsonl"), "--pipeline", "bm25", "--no-progress"]
    golden = ["--golden", str(KB / "golden.jsonl")]
    assert main(["audit-tenants", *corpus, *golden, "--out", str(out / "audit.json")]) == 0
    assert main(["audit-tenants", *corpus, "--out", str(out / "plain.json")]) == 0
    return {
        name: json.loads((out / f"{name}.json").read_text()) for name in ("bm25", "binary", "audit", "plain")
    }


def _gate(report: dict[str, Any], audit: dict[str, Any]) -> Any:
    return security_gate(LoadedReport("eval", "eval.json", report), GatePolicy(), [("audit.json", audit)])


def test_the_audit_records_the_golden_rankings(runs: dict[str, Any]) -> None:
    held = runs["audit"]["golden_rankings"]
    assert held["dataset_sha256"] == runs["bm25"]["dataset"]["sha256"] and held["top_k"] == 10
    assert len(held["cases"]) == 84


def test_a_copied_pipeline_block_is_caught_by_the_rankings(runs: dict[str, Any]) -> None:
    forged = {**runs["binary"], "pipeline": runs["bm25"]["pipeline"]}
    why = rankings_differ(forged, runs["audit"])
    assert why is not None and why.startswith("it audited another system: asked the report's 84 golden")
    gate = _gate(forged, runs["audit"])
    assert gate.status == "not_verified" and "mean top-10 overlap" in gate.summary
    # without --golden the copy is not caught: the notes say what the tie rests on
    plain = _gate(forged, runs["plain"])
    assert plain.status == "pass"
    assert any("by the system's name and the corpus sha256 only" in n for n in plain.notes)


def test_the_audited_systems_own_report_is_tied_by_its_rankings(runs: dict[str, Any]) -> None:
    gate = _gate(runs["bm25"], runs["audit"])
    assert gate.status == "pass"
    assert any("tied to the report by its rankings too: 84 golden question(s)" in n for n in gate.notes)
    other_set = {
        **runs["audit"],
        "golden_rankings": {**runs["audit"]["golden_rankings"], "dataset_sha256": "0"},
    }
    assert rankings_differ(runs["bm25"], other_set) is None
    assert "another golden set" in tie_basis_note(runs["bm25"], other_set, "a.json")


def test_a_report_made_at_a_smaller_top_k_is_compared_at_its_depth(runs: dict[str, Any]) -> None:
    shallow = json.loads(json.dumps(runs["bm25"]))
    shallow["retrieval"] = {**shallow.get("retrieval", {}), "top_k": 5}
    for case in shallow["per_case"]:
        case["retrieved"] = case.get("retrieved", [])[:5]
    assert rankings_differ(shallow, runs["audit"]) is None
