"""``ragaudit eval --corpus`` checks the owner of every value of the response, not only of the result list:
a service whose results are the caller's own but whose ``debug`` field names another tenant's document
fails the run's isolation check, as the tenant audit fails it (one reader: security/response_fields.py)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragaudit.cli.main import main
from servers import LocalServer, Reply, Request

KB = Path(__file__).resolve().parents[1] / "src" / "ragaudit" / "demo_data" / "kb"
DOCS = [json.loads(line) for line in (KB / "corpus.jsonl").read_text("utf-8").splitlines() if line.strip()]
TENANTS = sorted({d["tenant_id"] for d in DOCS})


def _first_doc(tenant: str) -> dict[str, Any]:
    return next(d for d in DOCS if d["tenant_id"] == tenant)


def service(debug_leaks: bool) -> Any:
    """Answers with two of the caller's own documents; its ``debug`` names the nearest document of
    the next tenant when ``debug_leaks`` (the caller's own when not)."""

    def handle(request: Request) -> Reply:
        body = request.json()
        tenant = body["tenant_id"]
        own = [d for d in DOCS if d["tenant_id"] == tenant][:2]
        results = [
            {"chunk_id": d["doc_id"], "score": 2.0 - i, "content": d["text"]} for i, d in enumerate(own)
        ]
        other = TENANTS[(TENANTS.index(tenant) + 1) % len(TENANTS)] if tenant in TENANTS else tenant
        near = (
            _first_doc(other if debug_leaks else tenant) if tenant in TENANTS else {"doc_id": "", "title": ""}
        )
        debug = {"query": body["query"], "nearest": [{"doc_id": near["doc_id"], "title": near["title"]}]}
        return Reply(body={"results": results, "debug": debug})

    return handle


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)


def _eval(url: str) -> tuple[int, dict[str, Any]]:
    args = ["eval", "--dataset", str(KB / "golden.jsonl"), "--corpus", str(KB / "corpus.jsonl")]
    args += ["--endpoint", url, "--results-field", "results", "--metrics", "nDCG@10"]
    code = main([*args, "--no-history", "--no-progress", "--out", "eval.json"])
    return code, json.loads(Path("eval.json").read_text())


def test_a_leak_only_in_a_debug_field_fails_eval_isolation() -> None:
    with LocalServer(service(debug_leaks=True)) as server:
        code, report = _eval(server.url)
    isolation = report["security"]["isolation"]
    assert code != 0 and isolation["state"] == "fail" and isolation["failures"] == 84
    assert report["security"]["leaks"] == report["security"]["cases_with_leaks"] == 84
    records = report["security"]["records"]
    first = records[0]
    assert first["rank"] == 0 and first["chunk_id"].startswith("$.debug.nearest[0].")
    acme = next(r for r in records if r["caller_tenant"] == "acme")
    assert acme["claimed_tenant"] == "globex"  # the debug field names globex's document
    # every chunk of the result list itself is the caller's own: the leak is only beside it
    assert isolation["verified"] == isolation["total"] == 168


def test_the_same_service_with_an_honest_debug_field_is_not_a_leak() -> None:
    with LocalServer(service(debug_leaks=False)) as server:
        code, report = _eval(server.url)
    isolation = report["security"]["isolation"]
    assert code == 0 and isolation["failures"] == 0 and isolation["state"] == "not_verified"
    assert isolation["reason"].startswith("no leak seen")


def test_the_tenant_audit_reads_the_same_debug_field_as_a_leak() -> None:
    """The two checks agree: the audit (whose reader eval now calls) reports the service as leaking."""
    args = ["audit-tenants", "--corpus", str(KB / "corpus.jsonl"), "--results-field", "results"]
    plan = ["--budget", "60", "--probes-per-tenant", "2", "--max-top-k", "10", "--no-progress"]
    with LocalServer(service(debug_leaks=True)) as server:
        code = main([*args, "--endpoint", server.url, *plan, "--out", "audit.json"])
    report = json.loads(Path("audit.json").read_text())
    assert (code, report["verdict"]) == (1, "leak")
