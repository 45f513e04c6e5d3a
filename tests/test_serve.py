"""``ragaudit serve``: the tenant bound to the API key, refusals, metrics, and the proofs against it.

The service runs as a real process (``python -m ragaudit serve --port 0``) on 127.0.0.1; the tests talk
to it over HTTP and stop it at the end. Proofs: the default tenant audit is clean against it; a serve
that takes the tenant from the request instead of the key is caught (by the default audit's
credential-conflict mutations and by a hand-written binding check); ``eval --endpoint`` against it
equals ``eval --pipeline`` in process.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import KB
from ragaudit.cli.main import main
from ragaudit.security.mutation_tally import NO_JWT_KEYS
from ragaudit.serving.keys import ServerKeys, hash_key, new_key, parse_keys

httpx = pytest.importorskip("httpx")
pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

CORPUS = str(KB / "corpus.jsonl")
TENANTS = ("acme", "globex", "initech")
ROOT = Path(__file__).resolve().parents[1]


def write_keys(folder: Path) -> tuple[Path, Path, dict[str, str]]:
    """A server keys file (hashes) and a client keys file (the keys), one key per demo tenant."""
    keys = {tenant: new_key() for tenant in TENANTS}
    server = folder / "keys.toml"
    server.write_text(
        "".join(f'[[key]]\ntenant = "{t}"\nsha256 = "{hash_key(k)}"\n' for t, k in keys.items()),
        encoding="utf-8",
    )
    client = folder / "keys-client.toml"
    client.write_text("[tenants]\n" + "".join(f'{t} = "{k}"\n' for t, k in keys.items()), encoding="utf-8")
    return server, client, keys


class ServeProcess:
    """``ragaudit serve ... --port 0`` in its own process; ``url`` is read from what it prints."""

    def __init__(self, *args: str) -> None:
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "ragaudit", "serve", *args, "--port", "0"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        self.url = ""
        self.lines: list[str] = []
        found = threading.Event()

        def read() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                self.lines.append(line)
                if line.startswith("search: "):
                    self.url = line.split()[1]
                    found.set()

        threading.Thread(target=read, daemon=True).start()
        if not found.wait(180):
            self.stop()
            raise RuntimeError(f"serve did not start: {''.join(self.lines)} {self.proc.stderr}")

    @property
    def base(self) -> str:
        return self.url.rsplit("/", 1)[0]

    def stop(self) -> str:
        """Stop the server; what it wrote on stderr (stdout is the reader thread's)."""
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        assert self.proc.stderr is not None
        return self.proc.stderr.read() or ""


@pytest.fixture(scope="module")
def keyfiles(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, str]]:
    return write_keys(tmp_path_factory.mktemp("serve-keys"))


@pytest.fixture(scope="module")
def bm25_serve(keyfiles: tuple[Path, Path, dict[str, str]]) -> Iterator[ServeProcess]:
    server = ServeProcess("--pipeline", "bm25", "--corpus", CORPUS, "--keys", str(keyfiles[0]))
    yield server
    err = server.stop()
    for key in keyfiles[2].values():  # keys are never logged
        assert key not in err and key not in "".join(server.lines)


def post(url: str, key: str | None, body: Any, **kwargs: Any) -> Any:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    headers.update(kwargs.pop("headers", {}))
    content = body if isinstance(body, (bytes, str)) else json.dumps(body)
    return httpx.post(url, content=content, headers=headers, timeout=30, **kwargs)


def test_search_serves_the_keys_tenant_in_the_retriever_shape(
    bm25_serve: ServeProcess, keyfiles: tuple[Path, Path, dict[str, str]]
) -> None:
    keys = keyfiles[2]
    for tenant in TENANTS:
        reply = post(bm25_serve.url, keys[tenant], {"query": "pricing plan refund", "top_k": 5})
        assert reply.status_code == 200
        results = reply.json()["results"]
        assert 0 < len(results) <= 5
        for chunk in results:
            assert {"chunk_id", "score", "content", "source_id", "tenant_id"} <= set(chunk)
            assert chunk["tenant_id"] == tenant and chunk["chunk_id"].startswith(tenant + "-")
        assert [c["score"] for c in results] == sorted((c["score"] for c in results), reverse=True)
    # X-API-Key works as well, and the body naming the key's own tenant is fine
    reply = httpx.post(
        bm25_serve.url, json={"query": "refund", "tenant_id": "globex"}, headers={"X-API-Key": keys["globex"]}
    )
    assert reply.status_code == 200 and all(c["tenant_id"] == "globex" for c in reply.json()["results"])


def test_the_http_retriever_reads_serve_with_a_key_per_tenant_and_no_field_flags(
    bm25_serve: ServeProcess, keyfiles: tuple[Path, Path, dict[str, str]]
) -> None:
    import asyncio

    from ragaudit.errors import PermanentRetrievalError
    from ragaudit.retrieval.http import HttpRetriever

    async def ask(tenant: str) -> list[Any]:
        async with HttpRetriever(bm25_serve.url, tenant_keys=str(keyfiles[1])) as retriever:
            return list(await retriever.search(tenant_id=tenant, query="refund policy", top_k=3))

    for tenant in TENANTS:
        chunks = asyncio.run(ask(tenant))
        assert chunks and all(c["tenant_id"] == tenant for c in chunks)
    for hostile in ("ACME", "acme,globex", "*", ""):  # no key for these: refused, never served
        with pytest.raises(PermanentRetrievalError, match="HTTP 401"):
            asyncio.run(ask(hostile))
    assert "rk_" not in repr(HttpRetriever(bm25_serve.url, tenant_keys=str(keyfiles[1])))


def test_superseded_versions_are_not_served(
    bm25_serve: ServeProcess, keyfiles: tuple[Path, Path, dict[str, str]]
) -> None:
    superseded = {
        json.loads(line)["doc_id"]
        for line in Path(CORPUS).read_text(encoding="utf-8").splitlines()
        if json.loads(line).get("metadata", {}).get("status") == "superseded"
    }
    assert "acme-pricing-professional-v2" in superseded
    key = keyfiles[2]["acme"]
    reply = post(bm25_serve.url, key, {"query": "Fieldsense Professional plan pricing", "top_k": 100})
    served = {c["metadata"]["doc_id"] for c in reply.json()["results"]}
    assert served and not served & superseded
    assert "acme-pricing-professional-v3" in served


REFUSALS = [
    # (what, key tenant, headers, params, body, status)
    ("no key", None, {}, {}, {"query": "refund"}, 401),
    ("wrong key", "bogus", {}, {}, {"query": "refund"}, 401),
    ("not bearer", "basic", {}, {}, {"query": "refund"}, 401),
    ("body tenant_id of another tenant", "acme", {}, {}, {"query": "refund", "tenant_id": "globex"}, 403),
    ("body tenant of another tenant", "acme", {}, {}, {"query": "refund", "tenant": "globex"}, 403),
    ("body tenantId near miss", "acme", {}, {}, {"query": "refund", "tenantId": "ACME"}, 403),
    ("body tenant_id null", "acme", {}, {}, {"query": "refund", "tenant_id": None}, 403),
    ("body tenant_id list", "acme", {}, {}, {"query": "refund", "tenant_id": ["acme", "globex"]}, 403),
    ("X-Tenant header", "acme", {"X-Tenant": "globex"}, {}, {"query": "refund"}, 403),
    ("X-Tenant-Id header", "acme", {"X-Tenant-Id": "acme,globex"}, {}, {"query": "refund"}, 403),
    ("tenant query parameter", "acme", {}, {"tenant": "globex"}, {"query": "refund"}, 403),
    ("tenant_id query parameter", "acme", {}, {"tenant_id": "*"}, {"query": "refund"}, 403),
    (
        "second tenant parameter",
        "acme",
        {},
        [("tenant", "acme"), ("tenant", "globex")],
        {"query": "refund"},
        403,
    ),
    ("not JSON", "acme", {}, {}, b"{not json", 400),
    ("NaN constant", "acme", {}, {}, b'{"query": "x", "top_k": NaN}', 400),
    ("JSON list", "acme", {}, {}, [1, 2], 400),
    ("empty body", "acme", {}, {}, b"", 400),
    ("no query", "acme", {}, {}, {"top_k": 3}, 422),
    ("blank query", "acme", {}, {}, {"query": "   "}, 422),
    ("query not a string", "acme", {}, {}, {"query": 42}, 422),
    ("query too long", "acme", {}, {}, {"query": "x" * 2001}, 422),
    ("top_k zero", "acme", {}, {}, {"query": "refund", "top_k": 0}, 422),
    ("top_k too large", "acme", {}, {}, {"query": "refund", "top_k": 101}, 422),
    ("top_k a string", "acme", {}, {}, {"query": "refund", "top_k": "5"}, 422),
    ("top_k boolean", "acme", {}, {}, {"query": "refund", "top_k": True}, 422),
    ("top_k fractional", "acme", {}, {}, {"query": "refund", "top_k": 2.5}, 422),
    ("body too large", "acme", {}, {}, {"query": "refund", "pad": "x" * 70_000}, 413),
]


@pytest.mark.parametrize(
    ("what", "who", "headers", "params", "body", "status"), REFUSALS, ids=[r[0] for r in REFUSALS]
)
def test_refusals_are_json_4xx_without_traceback_or_key(
    bm25_serve: ServeProcess,
    keyfiles: tuple[Path, Path, dict[str, str]],
    what: str,
    who: str | None,
    headers: dict[str, str],
    params: Any,
    body: Any,
    status: int,
) -> None:
    keys = keyfiles[2]
    key = keys.get(who or "", "rk_not-a-key-of-anyone")
    extra = {"Authorization": f"Basic {keys['acme']}"} if who == "basic" else {}
    reply = post(
        bm25_serve.url, None if who is None else key, body, headers={**headers, **extra}, params=params
    )
    assert reply.status_code == status, (what, reply.text)
    assert reply.headers["content-type"].startswith("application/json")
    error = reply.json()["error"]
    assert isinstance(error, str) and error and "Traceback" not in reply.text
    assert all(k not in reply.text for k in keys.values())
    if status == 401:
        assert reply.headers["www-authenticate"].startswith("Bearer")


def test_other_paths_and_methods_are_json_and_healthz_names_no_tenant(bm25_serve: ServeProcess) -> None:
    assert httpx.get(bm25_serve.url).status_code == 405
    missing = httpx.get(bm25_serve.base + "/nope")
    assert missing.status_code == 404 and missing.json() == {"error": "not found"}
    health = httpx.get(bm25_serve.base + "/healthz")
    assert health.status_code == 200
    body = health.json()
    assert body.pop("index") in ("built", "loaded")  # the default --index-dir: built once per cache folder
    assert body == {"status": "ok", "pipeline": "bm25", "documents": 75, "chunks": 75}
    assert not any(t in health.text for t in TENANTS)


METRIC_LINE = re.compile(
    r'^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*"'
    r'(?:,[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\]|\\.)*")*)\})? (?P<value>[-+]?(?:[0-9.e+-]+|Inf|NaN))$'
)


def parse_metrics(text: str) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a Prometheus text page; a line that breaks the format fails the test."""
    samples: dict[tuple[str, frozenset[tuple[str, str]]], float] = {}
    typed: set[str] = set()
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ")
            assert kind in ("counter", "histogram")
            typed.add(name)
            continue
        if line.startswith("# HELP "):
            continue
        match = METRIC_LINE.match(line)
        assert match, f"not a Prometheus sample line: {line!r}"
        family = re.sub(r"_(bucket|sum|count)$", "", match["name"])
        assert match["name"] in typed or family in typed, line
        labels = frozenset(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', match["labels"] or ""))
        samples[(match["name"], labels)] = float(match["value"])
    return samples


def test_metrics_count_requests_latency_and_errors_per_tenant(
    bm25_serve: ServeProcess, keyfiles: tuple[Path, Path, dict[str, str]]
) -> None:
    keys = keyfiles[2]
    before = parse_metrics(httpx.get(bm25_serve.base + "/metrics").text)
    for _ in range(3):
        assert post(bm25_serve.url, keys["initech"], {"query": "invoice", "top_k": 2}).status_code == 200
    assert post(bm25_serve.url, keys["initech"], {"query": "x", "tenant_id": "acme"}).status_code == 403
    assert post(bm25_serve.url, None, {"query": "x"}).status_code == 401
    page = httpx.get(bm25_serve.base + "/metrics")
    assert page.headers["content-type"].startswith("text/plain; version=0.0.4")
    after = parse_metrics(page.text)

    def delta(name: str, **labels: str) -> float:
        key = (name, frozenset(labels.items()))
        return after.get(key, 0.0) - before.get(key, 0.0)

    assert delta("ragaudit_serve_requests_total", tenant="initech", status="200") == 3
    assert delta("ragaudit_serve_requests_total", tenant="initech", status="403") == 1
    assert delta("ragaudit_serve_errors_total", tenant="initech", reason="tenant-mismatch") == 1
    assert delta("ragaudit_serve_errors_total", tenant="-", reason="unauthenticated") == 1
    assert delta("ragaudit_serve_results_total", tenant="initech") == 6
    assert delta("ragaudit_serve_request_duration_seconds_count", tenant="initech") == 4
    buckets = sorted(
        (float(dict(labels)["le"]), value)
        for (name, labels), value in after.items()
        if name == "ragaudit_serve_request_duration_seconds_bucket" and ("tenant", "initech") in labels
    )
    counts = [value for _, value in buckets]
    assert counts == sorted(counts) and buckets[-1][0] == float("inf")
    assert (
        buckets[-1][1]
        == after[("ragaudit_serve_request_duration_seconds_count", frozenset({("tenant", "initech")}))]
    )
    assert all(k not in page.text for k in keys.values())


def test_keys_file_hashes_rotation_and_errors(tmp_path: Path) -> None:
    assert hash_key("test") == "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08"
    old, new = new_key(), new_key()
    path = tmp_path / "keys.toml"
    path.write_text(f'[[key]]\ntenant = "acme"\nsha256 = "{hash_key(old)}"\n', encoding="utf-8")
    keys = ServerKeys(str(path))
    assert keys.tenant_of(old) == "acme" and keys.tenant_of(new) is None and keys.tenant_of("") is None
    # rotation: the new key is added (both work), then the old one removed; no restart
    time.sleep(0.01)
    path.write_text(
        f'[[key]]\ntenant = "acme"\nsha256 = "{hash_key(new)}"\nlabel = "acme-2"\n', encoding="utf-8"
    )
    assert keys.tenant_of(new) == "acme" and keys.tenant_of(old) is None
    bad = [
        ('[[key]]\ntenant = "acme"\nsha256 = "KEY-IN-CLEAR"\n', "64 lower-case hex"),
        ('[[key]]\ntenant = " acme"\nsha256 = "' + "a" * 64 + '"\n', "surrounding spaces"),
        (
            '[[key]]\ntenant = "acme"\nsha256 = "'
            + "a" * 64
            + '"\n[[key]]\ntenant = "globex"\nsha256 = "'
            + "a" * 64
            + '"\n',
            "same key hash",
        ),
        ("[other]\nx = 1\n", "unknown table"),
        ("", "no \\[\\[key\\]\\] entries"),
    ]
    from ragaudit.errors import InputError

    for text, message in bad:
        path.write_text(text, encoding="utf-8")
        with pytest.raises(InputError, match=message):
            parse_keys(str(path))


def test_hash_key_and_new_key_commands(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import io

    monkeypatch.setattr(sys, "stdin", io.StringIO("test\n"))
    assert main(["serve", "--hash-key"]) == 0
    assert capsys.readouterr().out.strip() == hash_key("test")
    assert main(["serve", "--new-key", "acme"]) == 0
    captured = capsys.readouterr()
    key = captured.err.strip().rsplit(" ", 1)[-1]
    assert key.startswith("rk_") and key not in captured.out  # the key is never in what goes to the file
    assert f'sha256 = "{hash_key(key)}"' in captured.out


def test_default_tenant_audit_is_clean_against_serve_bm25(
    bm25_serve: ServeProcess, keyfiles: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    out = tmp_path / "audit.json"
    code = main(
        [
            "audit-tenants", "--corpus", CORPUS, "--canaries", str(KB / "canaries.jsonl"), "--no-progress",
            "--endpoint", bm25_serve.url, "--endpoint-keys", str(keyfiles[1]), "--out", str(out),
        ]
    )  # fmt: skip
    report = json.loads(out.read_text(encoding="utf-8"))
    assert code == 0 and report["verdict"] == "clean" and report["isolation"]["state"] == "pass"
    assert report["leaks"]["count"] == 0
    assert report["unattributed"]["count"] == 0
    hostile = report["hostile_tenants"]
    assert hostile["served"] == 0 and hostile["refused"] == hostile["requests"] > 0
    rows = conflict_rows(report)  # another tenant's key naming the owner: refused, counted as rejected
    keyed, forged = rows[:5], rows[5:]  # serve's keys are opaque: no JWT to forge
    assert len(rows) == 7 and all(r["applicable"] and r["leaks"] == 0 for r in keyed)
    assert all(r["rejected"] == r["requests"] > 0 for r in keyed[:4])  # tenant_id named twice, owner last too
    assert keyed[4]["answered"] > 0  # owner then caller: JSON keeps the last, the caller's own data
    assert all(not r["applicable"] and NO_JWT_KEYS in r["reason"] for r in forged)


def binding_violations(url: str, keys: dict[str, str]) -> list[str]:
    """Every (key holder, named tenant, channel) whose request was answered with the named tenant's
    chunks instead of being refused: a key must never read another tenant's data, whatever the
    request names."""
    found: list[str] = []
    for holder, key in keys.items():
        for named in keys:
            if named == holder:
                continue
            channels: dict[str, dict[str, Any]] = {
                "body": {"body": {"query": "pricing refund policy", "tenant_id": named}},
                "header": {"body": {"query": "pricing refund policy"}, "headers": {"X-Tenant": named}},
                "query": {"body": {"query": "pricing refund policy"}, "params": {"tenant": named}},
            }
            for channel, parts in channels.items():
                reply = post(url, key, parts.pop("body"), **parts)
                if reply.status_code == 200 and any(
                    not c["chunk_id"].startswith(holder + "-") for c in reply.json()["results"]
                ):
                    found.append(f"{holder} read {named} through the {channel}")
                elif reply.status_code != 403:
                    found.append(f"{holder} naming {named} in the {channel}: HTTP {reply.status_code}")
    return found


def test_the_tenant_binding_holds_for_every_key_and_channel(
    bm25_serve: ServeProcess, keyfiles: tuple[Path, Path, dict[str, str]]
) -> None:
    assert binding_violations(bm25_serve.url, keyfiles[2]) == []


@pytest.fixture(scope="module")
def body_trusting_url(keyfiles: tuple[Path, Path, dict[str, str]]) -> Iterator[str]:
    """A deliberately broken serve: any valid key admits the request, and the tenant is read from the
    body (the classic bug); the URL of its search endpoint."""
    import uvicorn

    from ragaudit.serving.app import Limits, bind, create_app
    from ragaudit.serving.engine import build_engine
    from ragaudit.serving.metrics import ServeMetrics

    keys = keyfiles[2]
    honest = create_app(build_engine("bm25", CORPUS), ServerKeys(str(keyfiles[0])), Limits(), ServeMetrics())

    async def body_trusting(scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Swap the presented key for the key of the tenant the body names (the bug)."""
        if scope["type"] != "http":
            return await honest(scope, receive, send)
        message = await receive()
        body = message.get("body", b"")
        try:
            named = json.loads(body).get("tenant_id")
        except (ValueError, AttributeError):
            named = None
        headers = dict(scope["headers"])
        valid = headers.get(b"authorization", b"").decode().removeprefix("Bearer ") in keys.values()
        if valid and named in keys:
            headers[b"authorization"] = f"Bearer {keys[named]}".encode()
        replayed = False

        async def again() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return message
            return await receive()

        return await honest({**scope, "headers": list(headers.items())}, again, send)

    sock = bind("127.0.0.1", 0)
    server = uvicorn.Server(
        uvicorn.Config(body_trusting, log_level="warning", access_log=False, lifespan="off")
    )
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started and time.monotonic() < deadline:
            time.sleep(0.05)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/search"
    finally:
        server.should_exit = True
        thread.join(20)


def test_a_serve_that_takes_the_tenant_from_the_body_is_caught(
    body_trusting_url: str, keyfiles: tuple[Path, Path, dict[str, str]]
) -> None:
    """The binding check catches the body-trusting serve through the body channel only."""
    violations = binding_violations(body_trusting_url, keyfiles[2])
    assert any("through the body" in v for v in violations)
    assert not any("through the header" in v or "through the query" in v for v in violations)


def conflict_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [r for r in report["asking"]["mutations"] if r["axis"] == "credential-conflict"]


def test_the_default_audit_catches_the_body_trusting_serve_by_a_credential_conflict(
    body_trusting_url: str, keyfiles: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    """One tenant's key with the owner named in the body: the broken serve answers with the owner's
    chunks, so the default audit (nothing but --endpoint-keys added) finds the leak and exits 1."""
    out = tmp_path / "audit.json"
    code = main(
        [
            "audit-tenants", "--corpus", CORPUS, "--no-progress", "--endpoint", body_trusting_url,
            "--endpoint-keys", str(keyfiles[1]), "--out", str(out),
        ]
    )  # fmt: skip
    report = json.loads(out.read_text(encoding="utf-8"))
    assert code == 1 and report["verdict"] == "leak" and report["leaks"]["count"] > 0
    rows = conflict_rows(report)[:4]  # the owner named in the body (last, when named twice): a leak
    assert all(r["applicable"] and r["leaks"] > 0 for r in rows), rows


def eval_report(args: list[str], tmp_path: Path, name: str) -> tuple[dict[str, Any], dict[str, list[Any]]]:
    out, results = tmp_path / f"{name}.json", tmp_path / f"{name}.jsonl"
    base = ["eval", "--dataset", str(KB / "golden.jsonl"), "--corpus", CORPUS, "--no-progress"]
    assert main([*base, *args, "--out", str(out), "--results", str(results)]) == 0
    rankings = {}
    for line in results.read_text(encoding="utf-8").splitlines():
        case = json.loads(line)
        rankings[case["id"]] = [(c["chunk_id"], c["score"]) for c in case.get("retrieved") or []]
    return json.loads(out.read_text(encoding="utf-8")), rankings


def test_eval_over_serve_equals_eval_of_the_pipeline_in_process(
    keyfiles: tuple[Path, Path, dict[str, str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the run history goes here
    server = ServeProcess(
        "--pipeline", "bm25", "--corpus", CORPUS, "--keys", str(keyfiles[0]), "--serve-superseded"
    )
    try:
        served, served_rankings = eval_report(
            ["--endpoint", server.url, "--endpoint-keys", str(keyfiles[1])], tmp_path, "served"
        )
    finally:
        server.stop()
    local, local_rankings = eval_report(["--pipeline", "bm25"], tmp_path, "local")
    assert len(local_rankings) == 84 and served_rankings == local_rankings
    assert served["metrics"] == local["metrics"]
    # the same isolation finding both ways (an eval alone does not verify isolation: the audit does)
    assert served["security"]["isolation"]["state"] == local["security"]["isolation"]["state"]
    assert served["security"]["isolation"]["failures"] == local["security"]["isolation"]["failures"] == 0


def test_tenant_audit_is_clean_against_serve_hybrid(
    keyfiles: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    """The dense engine in process (through hybrid: bm25 + dense, RRF), a smaller plan than the
    defaults (the full default audit of dense and hybrid against serve is in docs/benchmarks.md)."""
    server = ServeProcess("--pipeline", "hybrid", "--corpus", CORPUS, "--keys", str(keyfiles[0]))
    out = tmp_path / "audit.json"
    try:
        code = main(
            [
                "audit-tenants", "--corpus", CORPUS, "--canaries", str(KB / "canaries.jsonl"), "--no-progress",
                "--endpoint", server.url, "--endpoint-keys", str(keyfiles[1]), "--out", str(out),
                "--probes-per-tenant", "6", "--rounds", "1",
            ]
        )  # fmt: skip
    finally:
        server.stop()
    report = json.loads(out.read_text(encoding="utf-8"))
    assert code == 0 and report["verdict"] == "clean" and report["leaks"]["count"] == 0
    assert report["isolation"]["verified"] > 0 and report["unattributed"]["count"] == 0
    assert report["hostile_tenants"]["served"] == 0


def test_the_listening_socket_lets_asyncio_set_tcp_nodelay() -> None:
    """asyncio sets TCP_NODELAY only on sockets whose protocol is IPPROTO_TCP; without it each response
    waited ~40 ms for the client's delayed ACK (bm25 at concurrency 1: 19.9 req/s before, 288 after)."""
    import socket

    from ragaudit.serving.app import bind

    sock = bind("127.0.0.1", 0)
    try:
        assert sock.proto == socket.IPPROTO_TCP
    finally:
        sock.close()


def test_a_key_in_clear_in_the_keys_file_is_bad_input_and_not_echoed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    keys = tmp_path / "keys.toml"
    keys.write_text('[[key]]\ntenant = "acme"\nsha256 = "rk_pasted-in-clear"\n', encoding="utf-8")
    assert main(["serve", "--pipeline", "bm25", "--corpus", CORPUS, "--keys", str(keys)]) == 2
    captured = capsys.readouterr()
    assert "64 lower-case hex" in captured.err and "rk_pasted-in-clear" not in captured.out + captured.err
    assert main(["serve", "--pipeline", "bm25", "--corpus", CORPUS]) == 2
    assert "--keys is required" in capsys.readouterr().err


def test_a_port_in_use_is_named_as_an_address_not_a_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import socket

    keys = tmp_path / "keys.toml"
    keys.write_text(f'[[key]]\ntenant = "acme"\nsha256 = "{hash_key("k")}"\n', encoding="utf-8")
    taken = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    taken.bind(("127.0.0.1", 0))
    taken.listen(1)
    port = taken.getsockname()[1]
    try:
        argv = ["serve", "--pipeline", "bm25", "--corpus", CORPUS, "--keys", str(keys), "--no-index-dir"]
        assert main([*argv, "--port", str(port), "-q"]) == 2
    finally:
        taken.close()
    err = capsys.readouterr().err
    assert f"error: --port: 127.0.0.1:{port} is already in use" in err
    assert "--port 0 picks a free one" in err and "check the path" not in err
