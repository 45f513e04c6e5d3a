"""No secret reaches an artifact or a log: auth tokens, other environment values, URL credentials.

A local service demands a bearer token and, when it fails, echoes the token back (in error bodies,
in malformed responses, split across the 200-character excerpt boundary). Every command that talks
to it (``eval``, ``audit-tenants``, ``audit-stale``) writes its JSON artifacts, results files and
console output; none may contain the token, any 12-character piece of it, or the other secrets
planted in the environment and the URL.
"""

from __future__ import annotations

import base64
import json
import secrets
import sys
from pathlib import Path

import pytest

from conftest import KB
from ragaudit.cli.main import main

sys.path.insert(0, str(Path(__file__).resolve().parent))
from servers import LocalServer, Reply, Request

TOKEN = "tok-" + secrets.token_hex(20)
OTHER = "env-" + secrets.token_hex(20)
URL_PASSWORD = "pw-" + secrets.token_hex(12)
URL_KEY = "qk-" + secrets.token_hex(12)
BASIC = base64.b64encode(f"reader:{URL_PASSWORD}".encode()).decode()
"""What an HTTP client makes of user info in the URL (a Basic credential)."""
ENV = "RAGAUDIT_TEST_TOKEN"


def pieces(secret: str, width: int = 12) -> list[str]:
    return [secret[i : i + width] for i in range(len(secret) - width + 1)]


def assert_clean(texts: dict[str, str]) -> None:
    for where, text in texts.items():
        for secret in (TOKEN, OTHER, URL_PASSWORD, URL_KEY, BASIC):
            leaked = [p for p in pieces(secret) if p in text]
            assert not leaked, f"{where} holds a piece of a secret: {leaked[0]}"


def written(folder: Path) -> dict[str, str]:
    return {str(p): p.read_text(encoding="utf-8", errors="replace") for p in folder.rglob("*") if p.is_file()}


def handler(corpus: dict[str, dict[str, str]]) -> object:
    """Serves the demo corpus by keyword; misbehaves (echoing the token) on some queries."""

    def handle(request: Request) -> Reply:
        auth = request.headers.get("authorization", "")
        if auth != f"Bearer {TOKEN}":
            return Reply(status=401, body={"detail": f"bad token {auth}"})
        body = request.json()
        query, tenant = str(body["query"]), body["tenant_id"]
        if "refund" in query.lower():
            return Reply(status=500, body=f"upstream rejected {auth}".encode())
        if "warranty" in query.lower():
            return Reply(body=("[" + " " * 190 + TOKEN).encode())
        if "password" in query.lower():
            return Reply(body={"results": [{"chunk_id": TOKEN, "score": "high"}]})
        if "api" in query.lower():
            return Reply(status=403, body=("x" * 190 + auth + "y" * 50).encode())
        words = set(query.lower().split())
        hits = [
            {
                "chunk_id": d["doc_id"],
                "score": 1.0,
                "tenant_id": tenant,
                "content": d["text"],
                "source_id": d["doc_id"],
            }
            for d in corpus.values()
            if d["tenant_id"] == tenant and words & set(d["text"].lower().split())
        ]
        return Reply(body=hits[:5])

    return handle


@pytest.fixture(scope="module")
def service():  # type: ignore[no-untyped-def]
    corpus = {}
    for line in (KB / "corpus.jsonl").read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        corpus[doc["doc_id"]] = doc
    with LocalServer(handler(corpus)) as server:  # type: ignore[arg-type]
        yield server


@pytest.fixture
def environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("RAGAUDIT_HISTORY", str(tmp_path / "history.sqlite"))  # scanned like every artifact
    monkeypatch.setenv(ENV, TOKEN)
    monkeypatch.setenv("OPENAI_API_KEY", OTHER)
    monkeypatch.setenv("QDRANT_API_KEY", OTHER)


def url_with_key(server: LocalServer) -> str:
    return f"http://127.0.0.1:{server.port}/search?api_key={URL_KEY}#frag"


def url_with_user_info(server: LocalServer) -> str:
    return f"http://reader:{URL_PASSWORD}@127.0.0.1:{server.port}/search"


def test_eval_report_results_and_logs_hold_no_secret(
    service: LocalServer, environment: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report.json"
    results = tmp_path / "results.jsonl"
    code = main(
        [
            "eval",
            "--dataset", str(KB / "golden.jsonl"),
            "--endpoint", url_with_key(service),
            "--auth-env", ENV,
            "--out", str(out),
            "--results", str(results),
            "--no-progress",
            "--concurrency", "4",
        ]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 1, captured.err  # a third of the cases failed (HTTP 500): the exit rule fails the run
    report = json.loads(out.read_text(encoding="utf-8"))
    errors = [e["error"] for e in report["errors"]]
    assert any("[redacted]" in e for e in errors) and any(e.startswith("HTTP 500") for e in errors)
    assert report["counts"]["errors"] < report["counts"]["cases"]  # the service did answer
    assert any(service.hits) and {h.headers.get("authorization") for h in service.hits} == {f"Bearer {TOKEN}"}
    assert_clean({**written(tmp_path), "stdout": captured.out, "stderr": captured.err})


def test_tenant_and_stale_audits_hold_no_secret(
    service: LocalServer, environment: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    common = ["--endpoint", url_with_key(service), "--auth-env", ENV, "--no-progress"]
    code = main(
        [
            "audit-tenants",
            "--corpus", str(KB / "corpus.jsonl"),
            "--out", str(tmp_path / "audit.json"),
            "--probes-per-tenant", "6",
            "--max-error-rate", "1",
            *common,
        ]
    )  # fmt: skip
    assert code == 0
    audit = json.loads((tmp_path / "audit.json").read_text(encoding="utf-8"))
    assert audit["source"]["endpoint"] == f"http://127.0.0.1:{service.port}/search"
    assert audit["leaks"]["count"] == 0 and audit["errors"]["failed"] > 0
    code = main(
        [
            "audit-stale",
            "--dataset", str(KB / "golden.jsonl"),
            "--corpus", str(KB / "corpus.jsonl"),
            "--out", str(tmp_path / "stale.json"),
            *common,
        ]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 1, captured.err  # failed requests fail the run (exit rule); its summary is checked too
    stale = json.loads((tmp_path / "stale.json").read_text(encoding="utf-8"))
    examples = [e["reason"] for kind in stale["sources"][0]["errors"]["examples"].values() for e in kind]
    assert any("[redacted]" in reason for reason in examples)
    assert_clean({**written(tmp_path), "stdout": captured.out, "stderr": captured.err})


def test_missing_credential_names_the_variable_not_a_value(
    service: LocalServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv(ENV, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", OTHER)
    code = main(
        ["eval", "--dataset", str(KB / "golden.jsonl"), "--endpoint", service.url, "--auth-env", ENV,
         "--out", str(tmp_path / "r.json"), "--no-progress"]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 2 and f"environment variable {ENV} is empty or not set" in captured.err
    assert_clean({**written(tmp_path), "stdout": captured.out, "stderr": captured.err})


def test_pipeline_artifacts_hold_no_environment_values(
    environment: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "audit.json"
    code = main(
        ["audit-tenants", "--corpus", str(KB / "corpus.jsonl"), "--pipeline", "bm25",
         "--probes-per-tenant", "3", "--out", str(out), "--no-progress"]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 0
    assert_clean({**written(tmp_path), "stdout": captured.out, "stderr": captured.err})


def test_user_info_in_the_url_is_never_sent_or_written(
    service: LocalServer, environment: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["eval", "--dataset", str(KB / "golden.jsonl"), "--endpoint", url_with_user_info(service),
         "--auth-env", ENV, "--out", str(tmp_path / "r.json"), "--no-progress"]
    )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 1  # the service fails some cases (HTTP 500): exit 1, with a summary as clean as the rest
    assert_clean({**written(tmp_path), "stdout": captured.out, "stderr": captured.err})
