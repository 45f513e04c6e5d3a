"""HttpRetriever against a real local HTTP server: mapping, auth, faults, leaks, secrecy."""

from __future__ import annotations

import asyncio
import json
import socket
import sys
from pathlib import Path
from typing import Any

import pytest

from ragaudit.data.run import Run
from ragaudit.data.run_jsonl import load_jsonl_run
from ragaudit.data.schema import GoldenCase
from ragaudit.errors import (
    InputError,
    MissingDependencyError,
    PermanentRetrievalError,
    TransientRetrievalError,
)
from ragaudit.retrieval.http import HttpRetriever, ResponseShape, _import_httpx, display_url
from ragaudit.retry import RetryPolicy
from ragaudit.runner.execute import run_cases

sys.path.insert(0, str(Path(__file__).resolve().parent))
from servers import LocalServer, Reply, Request, chunk, echo_handler

SECRET = "s3cr3t-token-value-9f8e7d"
ENV = "RAGAUDIT_TEST_TOKEN"
FAST = RetryPolicy(max_attempts=3, base_delay_s=0.01, max_delay_s=0.05, seed=7)


def cases(*queries: str, tenant: str = "acme") -> list[GoldenCase]:
    return [GoldenCase(q, q, (f"{q}#0",), tenant_id=tenant) for q in queries]


def run(retriever: Any, the_cases: list[GoldenCase], **kwargs: Any) -> Run:
    kwargs.setdefault("retry", FAST)
    kwargs.setdefault("timeout_s", 5.0)
    return asyncio.run(run_cases(retriever, the_cases, 5, progress=False, **kwargs))


def test_results_come_back_in_the_service_order() -> None:
    with LocalServer(echo_handler()) as server:
        result = run(HttpRetriever(server.url), cases("alpha", "beta"))
    assert [c.ranking for c in result.cases.values()] == [["alpha#0", "alpha#1"], ["beta#0", "beta#1"]]
    first = result.cases["alpha"]
    assert first.error is None and first.attempts == 1 and first.leaks == []
    assert first.items[0].score == 2.0 and first.items[0].tenant_id == "acme"
    assert first.latency_ms is not None and first.latency_ms > 0
    # the two cases run concurrently: find alpha's request rather than assuming it arrived first
    alpha = next(hit for hit in server.hits if hit.json()["query"] == "alpha")
    assert alpha.json() == {"tenant_id": "acme", "query": "alpha", "top_k": 5}
    assert alpha.method == "POST"


async def search_once(retriever: HttpRetriever, **kwargs: Any) -> Any:
    async with retriever:
        return await retriever.search(**kwargs)


def test_request_and_response_field_mapping() -> None:
    def handle(request: Request) -> Reply:
        body = request.json()
        hits = [
            {"id": 7, "relevance": 0.9, "text": "seven", "payload": {"tenant": body["tenant"]}},
            {"id": "x-2", "relevance": 0.5, "payload": {"tenant": body["tenant"]}, "extra": [1]},
        ]
        return Reply(body={"data": {"hits": hits[: body["k"]]}, "took": 3})

    retriever = HttpRetriever(
        "http://placeholder/",
        request_fields={"tenant_id": "tenant", "query": "q", "top_k": "k"},
        results_path="data.hits",
        field_map={"chunk_id": "id", "score": "relevance", "content": "text", "tenant_id": "payload.tenant"},
    )
    with LocalServer(handle) as server:
        retriever.url = server.url
        result = run(retriever, cases("what"))
        direct = asyncio.run(search_once(retriever, tenant_id="acme", query="q", top_k=1))
    case = result.cases["what"]
    assert case.ranking == ["7", "x-2"]
    assert [i.score for i in case.items] == [0.9, 0.5]
    assert case.items[0].content == "seven" and case.items[1].content is None
    assert {i.tenant_id for i in case.items} == {"acme"} and case.leaks == []
    assert server.hits[0].json() == {"tenant": "acme", "q": "what", "k": 5}
    assert direct == [{"chunk_id": "7", "score": 0.9, "content": "seven", "tenant_id": "acme"}]


def test_auth_header_is_sent_and_never_leaks(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv(ENV, SECRET + "\n")  # trailing newline, as `$(cat token)` often leaves

    def handle(request: Request) -> Reply:
        auth = request.headers.get("authorization", "")
        query = request.json()["query"]
        if auth != f"Bearer {SECRET}":
            return Reply(status=401, body={"detail": "missing token"})
        if query == "echo-401":  # a careless service that echoes the credential back
            return Reply(status=401, body={"detail": f"token {auth} is revoked"})
        if query == "echo-500":
            return Reply(status=500, body=f"upstream rejected {auth}".encode())
        if query == "echo-long":  # the credential straddles the excerpt's 200-character cut
            return Reply(status=400, body=("x" * 190 + SECRET + "y" * 50).encode())
        if query == "echo-json":
            return Reply(body=("[" + " " * 190 + SECRET).encode())
        if query == "echo-bad":
            return Reply(body={"results": [{"chunk_id": SECRET, "score": "high"}]})
        return echo_handler()(request)

    results = tmp_path / "results.jsonl"
    with LocalServer(handle) as server:
        retriever = HttpRetriever(server.url, auth_header_env=ENV)
        result = run(
            retriever,
            cases("ok", "echo-401", "echo-500", "echo-bad", "echo-long", "echo-json"),
            results_path=results,
        )
    assert {h.headers["authorization"] for h in server.hits} == {f"Bearer {SECRET}"}
    assert result.cases["ok"].error is None
    for case_id in ("echo-401", "echo-500", "echo-bad", "echo-long", "echo-json"):
        error = result.cases[case_id].error
        assert error is not None and SECRET[:8] not in error and "[redacted]" in error
    assert result.cases["echo-401"].error.startswith("HTTP 401")  # type: ignore[union-attr]
    assert result.cases["echo-500"].attempts == 3
    assert SECRET not in repr(retriever) and ENV in repr(retriever)
    assert SECRET not in str(vars(retriever))
    for artifact in tmp_path.iterdir():
        assert SECRET not in artifact.read_text(encoding="utf-8"), artifact


def test_custom_auth_header_without_scheme(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV, SECRET)
    with LocalServer(echo_handler()) as server:
        run(
            HttpRetriever(server.url, auth_header_env=ENV, auth_header="X-API-Key", auth_scheme=""),
            cases("a"),
        )
    assert server.hits[0].headers["x-api-key"] == SECRET
    assert "authorization" not in server.hits[0].headers


def test_missing_credential_stops_the_run_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    with LocalServer(echo_handler()) as server, pytest.raises(PermanentRetrievalError, match=ENV):
        run(HttpRetriever(server.url, auth_header_env=ENV), cases("a"))
    assert server.hits == []


def fault_handler(request: Request) -> Reply:
    body = request.json()
    query, tenant, attempt = body["query"], body["tenant_id"], request.attempt
    ok = Reply(body=[chunk(f"{query}#0", tenant)])
    faults: dict[str, Reply] = {
        "slow-once": Reply(delay_s=2.0),
        "500-then-ok": Reply(status=500, body=b"boom"),
        "503-twice": Reply(status=503),
        "429-then-ok": Reply(status=429, headers={"Retry-After": "0"}),
        "reset-once": Reply(reset=True),
    }
    if query in faults and (attempt == 1 or (query == "503-twice" and attempt == 2)):
        return faults[query]
    if query == "always-503":
        return Reply(status=503, body={"error": "overloaded"})
    if query == "malformed":
        return Reply(body=b'{"results": [ {"chunk_id": "a"} ')
    if query == "wrong-type":
        return Reply(body=[{"chunk_id": "a", "score": "high", "tenant_id": tenant}])
    if query == "not-found":
        return Reply(status=404, body={"error": "no such index"})
    if query == "bad-request":
        return Reply(status=400)
    return ok


def test_injected_faults_are_retried_or_recorded_per_case() -> None:
    queries = [
        "fine",
        "slow-once",
        "500-then-ok",
        "503-twice",
        "429-then-ok",
        "reset-once",
        "always-503",
        "malformed",
        "wrong-type",
        "not-found",
        "bad-request",
    ]
    with LocalServer(fault_handler) as server:
        result = run(HttpRetriever(server.url, timeout_s=5.0), cases(*queries), timeout_s=0.5, concurrency=4)
    assert list(result.cases) == queries  # every case accounted for, in order
    got = {cid: (c.error is None, c.attempts) for cid, c in result.cases.items()}
    assert got == {
        "fine": (True, 1),
        "slow-once": (True, 2),
        "500-then-ok": (True, 2),
        "503-twice": (True, 3),
        "429-then-ok": (True, 2),
        "reset-once": (True, 2),
        "always-503": (False, 3),
        "malformed": (False, 1),
        "wrong-type": (False, 1),
        "not-found": (False, 1),
        "bad-request": (False, 1),
    }
    errors = {cid: c.error or "" for cid, c in result.cases.items()}
    assert errors["always-503"].startswith("HTTP 503") and "(3 attempts)" in errors["always-503"]
    assert "not valid JSON" in errors["malformed"]
    assert "'score'" in errors["wrong-type"] and "a finite number" in errors["wrong-type"]
    assert "a string" in errors["wrong-type"]  # what it got
    assert errors["not-found"].startswith("HTTP 404") and "check the URL" in errors["not-found"]
    assert "request_fields" in errors["bad-request"]
    hits = server.queries()
    assert hits["malformed"] == hits["wrong-type"] == hits["not-found"] == 1  # permanent: never retried
    assert hits["always-503"] == 3
    assert result.cases["500-then-ok"].ranking == ["500-then-ok#0"]


def test_timeout_of_the_adapter_itself_is_transient() -> None:
    def handle(request: Request) -> Reply:
        return Reply(body=[chunk("a", "acme")], delay_s=1.0 if request.attempt == 1 else 0.0)

    with LocalServer(handle) as server:
        result = run(HttpRetriever(server.url, timeout_s=0.2), cases("q"), timeout_s=None)
    assert result.cases["q"].error is None and result.cases["q"].attempts == 2


def test_connection_refused_is_a_recorded_transient_failure() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    result = run(HttpRetriever(f"http://127.0.0.1:{port}/search"), cases("a", "b"))
    for case in result.cases.values():
        assert case.error is not None and case.error.startswith("connection failed") and case.attempts == 3


def test_foreign_tenant_chunk_from_the_service_is_a_leak() -> None:
    def handle(request: Request) -> Reply:
        tenant = request.json()["tenant_id"]
        return Reply(
            body=[chunk("own", tenant), chunk("theirs", "globex"), {"chunk_id": "unlabelled", "score": 0.1}]
        )

    with LocalServer(handle) as server:
        lenient = run(HttpRetriever(server.url), cases("q"))
        strict = run(HttpRetriever(server.url), cases("q"), require_tenant_labels=True)
    case = lenient.cases["q"]
    assert case.ranking == ["own", "theirs", "unlabelled"]  # the ranking is what the system returned
    assert [(x.chunk_id, x.rank, x.claimed_tenant, x.caller_tenant) for x in case.leaks] == [
        ("theirs", 2, "globex", "acme")
    ]
    assert [(x.chunk_id, x.claimed_tenant) for x in strict.cases["q"].leaks] == [
        ("theirs", "globex"),
        ("unlabelled", None),
    ]


def test_leaks_and_attempts_survive_the_results_file(tmp_path: Path) -> None:
    def handle(request: Request) -> Reply:
        if request.attempt == 1:
            return Reply(status=502)
        return Reply(body=[chunk("theirs", "globex")])

    path = tmp_path / "r.jsonl"
    with LocalServer(handle) as server:
        first = run(HttpRetriever(server.url), cases("q"), results_path=path)
        again = run(HttpRetriever(server.url), cases("q"), results_path=path, resume=True)
    assert len(server.hits) == 2  # resumed from the file, not asked again
    # the 502 was retried (attempts >= 2; a third when an attempt outlives its deadline on a loaded
    # machine), and the resumed case keeps the first run's leaks and attempts
    assert first.cases["q"].attempts >= 2
    assert again.cases["q"].leaks == first.cases["q"].leaks
    assert again.cases["q"].attempts == first.cases["q"].attempts
    assert again.cases["q"].tenant_id == "acme"
    assert load_jsonl_run(path).cases["q"].ranking == ["theirs"]  # still a plain JSONL run file


def test_pool_serves_more_concurrency_than_one_shard() -> None:
    with LocalServer(echo_handler(delay_s=0.05)) as server:
        result = run(HttpRetriever(server.url), cases(*[f"q{i}" for i in range(40)]), concurrency=20)
    assert all(c.error is None for c in result.cases.values()) and len(result.cases) == 40


def test_response_shape_messages_name_the_field() -> None:
    shape = ResponseShape.build({"chunk_id": "id", "tenant_id": "meta.tenant"}, None)

    def error(data: Any) -> str:
        with pytest.raises(PermanentRetrievalError) as info:
            shape.parse(json.dumps(data).encode())
        return str(info.value)

    assert shape.parse(b'{"results": [{"id": 3, "meta": {"tenant": "t"}}]}') == [
        {"chunk_id": "3", "tenant_id": "t"}
    ]
    assert "'id' (mapped to chunk_id)" in error([{"chunk_id": "a"}])
    assert "must be a non-empty string, got null" in error([{"id": None}])
    assert "'meta.tenant' (mapped to tenant_id) must be a string, got the number 5" in error(
        [{"id": "a", "meta": {"tenant": 5}}]
    )
    assert "'metadata' must be an object, got an array" in error([{"id": "a", "metadata": []}])
    assert "result #2 must be an object, got a string" in error([{"id": "a"}, "b"])
    assert "'results' array" in error({"hits": []})
    assert "a boolean" in error([{"id": True}])
    with pytest.raises(PermanentRetrievalError, match="not valid JSON"):
        shape.parse(b'[{"id": "a", "score": NaN}]')
    with pytest.raises(PermanentRetrievalError, match=r"no 'data.hits' \(it has: x\)"):
        ResponseShape.build(None, "data.hits").parse(b'{"x": 1}')


def test_configuration_errors_are_input_errors() -> None:
    with pytest.raises(InputError, match="unknown field_map"):
        HttpRetriever("http://h/", field_map={"chunkid": "id"})
    with pytest.raises(InputError, match="unknown request_fields"):
        HttpRetriever("http://h/", request_fields={"k": "top"})
    with pytest.raises(InputError, match="not an http"):
        HttpRetriever("ftp://h/")
    with pytest.raises(InputError, match="both in headers"):
        HttpRetriever("http://h/", auth_header_env=ENV, headers={"authorization": "x"})


def test_display_url_hides_credentials() -> None:
    assert (
        display_url("https://user:pw@example.com:8443/v1/search?key=abc#frag")
        == "https://example.com:8443/v1/search"
    )
    assert "pw" not in repr(HttpRetriever("https://user:pw@example.com/s?key=abc"))


def test_missing_httpx_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)
    with pytest.raises(MissingDependencyError, match=r"ragaudit\[http\]"):
        _import_httpx()


def test_transient_error_carries_retry_after() -> None:
    with (
        LocalServer(lambda request: Reply(status=429, headers={"Retry-After": "7"})) as server,
        pytest.raises(TransientRetrievalError) as info,
    ):
        asyncio.run(search_once(HttpRetriever(server.url), tenant_id="t", query="q", top_k=1))
    assert info.value.retry_after_s == 7.0
