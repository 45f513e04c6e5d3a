"""No form of a credential reaches any output: eval, results file, tenant audit, check-answers.

A real local service (``tests/servers.py``) demands a bearer token and echoes it back in every form a
careless service might (``secret_forms.echoes``: raw, JSON-escaped, URL-encoded, base64 blobs and
Basic credentials, hex, truncated to 8-12 characters) and in every place: chunk ids, content, nested
metadata values, source ids, successful bodies where a PHP-style encoder escaped ``/`` as ``\\/``,
malformed bodies, 500 and 403 error bodies. The chat client is checked the same way against the
OpenAI-compatible stub (``tests/openai_stub.py``). Every file written, stdout and stderr are then
searched for every encoding of the token and of each of its 8-character windows
(``secret_forms.needles``).
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import KB
from ragaudit.cli.main import main

sys.path.insert(0, str(Path(__file__).resolve().parent))
from openai_stub import OpenAIStub
from openai_stub import Reply as ChatReply
from secret_forms import TOKENS, echoes, leaked
from servers import LocalServer, Reply, Request

ENV = "RAGAUDIT_FORMS_TOKEN"


def written(folder: Path) -> dict[str, str]:
    return {str(p): p.read_bytes().decode("utf-8", "replace") for p in folder.rglob("*") if p.is_file()}


def _style(query: str) -> int:
    return int(hashlib.sha256(query.encode()).hexdigest(), 16) % 6


def leaky_service(token: str, corpus: list[dict[str, Any]]) -> Any:
    """Answers by keyword from the caller's documents, and echoes the token in every form and place."""
    forms = echoes(token)
    names = sorted(forms)

    def handle(request: Request) -> Reply:
        if request.headers.get("authorization") != f"Bearer {token}":
            return Reply(status=401, body={"detail": "missing credential"})
        body = request.json()
        query, tenant = str(body["query"]), str(body["tenant_id"])
        style = _style(query)
        everything = " ".join(f"{name}={form}" for name, form in forms.items())
        if style == 0:
            return Reply(status=500, body={"error": "upstream failed", "echo": everything})
        if style == 1:
            return Reply(status=403, body=f"denied for {forms['url']} / {forms['basic']}".encode())
        if style == 2:  # not JSON
            return Reply(
                body=f"<html>{forms['json_slash']} {forms['blob']} {forms['trunc10']}</html>".encode()
            )
        form = forms[names[int(hashlib.md5(query.encode()).hexdigest(), 16) % len(names)]]
        words = set(query.lower().split())
        own = [d for d in corpus if d["tenant_id"] == tenant and words & set(d["text"].lower().split())]
        hits: list[dict[str, Any]] = [
            {"chunk_id": d["doc_id"], "score": 2.0, "tenant_id": tenant, "content": d["text"]}
            for d in own[:3]
        ]
        hits.append(
            {
                "chunk_id": f"echo-{form}",
                "score": 1.0,
                "tenant_id": tenant,
                "content": f"debug: {everything}",
                "source_id": forms["trunc12"],
                "metadata": {
                    "request": {"headers": {"authorization": forms["bearer"]}},
                    "all": list(forms.values()),
                },
            }
        )
        if style == 3:  # a PHP-style encoder: every "/" in the body written as "\/"
            return Reply(body=json.dumps(hits).replace("/", "\\/").encode())
        return Reply(body={"results": hits})

    return handle


def run_against_service(
    token: str, corpus: list[dict[str, Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> int:
    """``ragaudit <args> --endpoint <leaky service> --auth-env ENV --no-progress``; its exit code."""
    monkeypatch.setenv(ENV, token)
    monkeypatch.setenv("RAGAUDIT_HISTORY", str(tmp_path / "history.sqlite"))
    with LocalServer(leaky_service(token, corpus)) as service:
        return main([*args, "--endpoint", service.url, "--auth-env", ENV, "--no-progress"])


@pytest.fixture(scope="module")
def corpus() -> list[dict[str, Any]]:
    return [json.loads(line) for line in (KB / "corpus.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("token", TOKENS)
def test_eval_and_results_hold_no_form_of_the_token(
    token: str,
    corpus: list[dict[str, Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    eval_args = ["eval", "--dataset", str(KB / "golden.jsonl"), "--out", str(tmp_path / "eval.json")]
    eval_args += ["--results", str(tmp_path / "results.jsonl")]
    code = run_against_service(token, corpus, tmp_path, monkeypatch, eval_args)
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err  # 1 once a failed case fails the run (issue 10, item 2)
    report = json.loads((tmp_path / "eval.json").read_text(encoding="utf-8"))
    errors = [e["error"] for e in report["errors"]]
    assert any(e.startswith("HTTP 500") for e in errors) and any(e.startswith("HTTP 403") for e in errors)
    assert any("[redacted]" in e for e in errors)
    results = (tmp_path / "results.jsonl").read_text(encoding="utf-8")
    assert "echo-[redacted]" in results  # the chunk id was returned, masked at the source
    found = leaked(token, {**written(tmp_path), "stdout": captured.out, "stderr": captured.err})
    assert not found, found[:5]


def test_tenant_audit_holds_no_form_of_the_token(
    corpus: list[dict[str, Any]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    token = TOKENS[0]
    audit_args = ["audit-tenants", "--corpus", str(KB / "corpus.jsonl"), "--probes-per-tenant", "3"]
    code = run_against_service(
        token, corpus, tmp_path, monkeypatch, [*audit_args, "--out", str(tmp_path / "audit.json")]
    )
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err
    audit = (tmp_path / "audit.json").read_text(encoding="utf-8")
    assert "[redacted]" in audit  # the echoed chunks were seen, masked
    found = leaked(token, {**written(tmp_path), "stdout": captured.out, "stderr": captured.err})
    assert not found, found[:5]


def test_check_answers_holds_no_form_of_the_api_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    key = TOKENS[1]
    forms = echoes(key)
    monkeypatch.setenv(ENV, key)
    monkeypatch.setenv("RAGAUDIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("RAGAUDIT_HISTORY", str(tmp_path / "history.sqlite"))
    lines = (KB / "golden.jsonl").read_text(encoding="utf-8").splitlines()[:6]
    golden = tmp_path / "golden.jsonl"
    golden.write_text("\n".join(lines) + "\n", encoding="utf-8")
    names = sorted(forms)
    answers = iter(range(1000))

    def respond(body: dict[str, Any]) -> ChatReply | str:
        n = next(answers)
        if n % 3 == 2:
            return ChatReply(status=400, echo_auth=True)
        if n % 3 == 1:
            return ChatReply(
                status=400, body={"error": {"message": f"bad key {forms[names[n % len(names)]]}"}}
            )
        return f"The answer is 12 months. (debug: {' '.join(forms.values())})"

    with OpenAIStub(responder=respond) as stub:
        code = main(
            [
                "check-answers",
                "--dataset", str(golden),
                "--corpus", str(KB / "corpus.jsonl"),
                "--pipeline", "bm25",
                "--endpoint", stub.base_url,
                "--model", "stub-model",
                "--api-key-env", ENV,
                "--no-embeddings",
                "--out", str(tmp_path / "answers.json"),
            ]
        )  # fmt: skip
        assert {r.headers.get("Authorization") for r in stub.requests} == {f"Bearer {key}"}
    captured = capsys.readouterr()
    assert code in (0, 1), captured.err
    report = (tmp_path / "answers.json").read_text(encoding="utf-8")
    assert "[redacted]" in report
    found = leaked(key, {**written(tmp_path), "stdout": captured.out, "stderr": captured.err})
    assert not found, found[:5]
