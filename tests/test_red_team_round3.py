"""The third red team of ``audit-tenants``: leaky HTTP services in styles the earlier proofs did not hold
(security/leaky_round3.py), each with an honest twin, audited through a real server on 127.0.0.1 with
the CLI. Every leaky one the audit can see must fail and every twin must stay clean; the two it cannot
see by probing (a count over every tenant, a leak rarer than the detection power) must be called clean
only with the verdict saying they were not checked (docs/security.md, "Red team, round 3")."""

from __future__ import annotations

import asyncio
import base64
import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from conftest import KB, SMALL_CLI
from ragaudit.cli.main import main
from ragaudit.corpus.model import Chunk
from ragaudit.retrieval.forged_tokens import forge, names_tenant
from ragaudit.retrieval.http import HttpRetriever, same_origin_redirect
from ragaudit.retrieval.http_response import keep_repeated_keys
from ragaudit.security.leaky import ROUND3_LEAKS
from ragaudit.security.leaky_round3 import ROUND3_STYLES, UNSEEN_STYLES, make_round3_service, signed_token
from ragaudit.security.mutation_tally import NO_JWT_KEYS
from servers import LocalServer, Reply, Request

CORPUS = str(KB / "corpus.jsonl")
SEEN = tuple(s for s in ROUND3_STYLES if s not in UNSEEN_STYLES)
FOUND_BY = {
    "jwt-claims": ("<caller>'s JWT",),
    "tenant-list": ("body tenant_ids: [<caller>, <owner>]", "body tenants: [<caller>, <owner>]"),
    "duplicate-key": ("<caller>'s key, body tenant_id: <caller> then tenant_id: <owner> (duplicate key)",),
    "nosql-filter": ("body tenant_id: [", 'body tenant_id: {"$'),
}
"""The mutation (a prefix of its name) that must have found the leak; the others leak on plain requests
(``tenant-prefix``: the hostile ids ``acm``, ``a``)."""


def _wire(service: Any) -> Any:
    def handle(request: Request) -> Reply:
        params = dict(parse_qsl(urlsplit(request.path).query))
        path = urlsplit(request.path).path
        status, body, headers = service.respond(request.json(), request.headers, params, request.body, path)
        return Reply(status=status, body=body, headers=headers)

    return handle


def _keys_file(path: Path, keys: dict[str, str]) -> str:
    path.write_text("[tenants]\n" + "".join(f'{t} = "{k}"\n' for t, k in keys.items()), encoding="utf-8")
    return str(path)


def _audit(service: Any, out: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    with LocalServer(_wire(service)) as server:
        code = main(
            [
                *("audit-tenants", "--corpus", CORPUS, "--endpoint", server.url),
                *("--out", str(out), "--no-progress", *SMALL_CLI, *extra),
            ]
        )
    return code, json.loads(out.read_text(encoding="utf-8"))


def _keys_for(style: str, service: Any, tmp_path: Path) -> tuple[str, ...]:
    if style == "redirect-export":  # the small plan's top_k 10 never takes the export path
        return ("--top-k-values", "10,100")
    if style not in ("jwt-claims", "duplicate-key"):
        return ()
    return ("--endpoint-keys", _keys_file(tmp_path / "keys.toml", service.keys()))


def test_every_round3_style_is_in_the_registry() -> None:
    assert (
        ROUND3_LEAKS == ROUND3_STYLES and len(ROUND3_STYLES) == 13 and set(UNSEEN_STYLES) < set(ROUND3_STYLES)
    )


@pytest.mark.parametrize("style", SEEN)
def test_each_round3_leak_fails_over_http_and_its_twin_does_not(
    style: str, chunks: list[Chunk], tmp_path: Path
) -> None:
    leaky = make_round3_service(style, chunks)
    code, report = _audit(leaky, tmp_path / "leaky.json", *_keys_for(style, leaky, tmp_path))
    assert code == 1 and report["verdict"] == "leak", (style, report["isolation"])
    if style in FOUND_BY:
        found = {r["asked"].get("mutation", "") for r in report["leaks"]["records"]}
        assert found and all(m.startswith(FOUND_BY[style]) for m in found), found
    honest = make_round3_service(style, chunks, honest=True)
    code, report = _audit(honest, tmp_path / "honest.json", *_keys_for(style, honest, tmp_path))
    assert report["leaks"]["count"] == 0, report["leaks"]["records"][:2]
    assert code == 0 and report["verdict"] == "clean", report["isolation"]
    assert report["unattributed"]["count"] == 0 and report["isolation"]["verified"] > 0
    if style in ("jwt-claims", "duplicate-key"):  # the twin refused them: rejected, never "not applicable"
        marks = {"jwt-claims": "<caller>'s JWT", "duplicate-key": "(duplicate key)"}
        rows = [r for r in report["asking"]["mutations"] if marks[style] in r["mutation"]]
        assert len(rows) == 2 and all(r["applicable"] and r["rejected"] == r["requests"] > 0 for r in rows)


@pytest.mark.parametrize("style", UNSEEN_STYLES)
def test_a_leak_probing_cannot_see_is_clean_only_with_the_limit_stated(
    style: str, chunks: list[Chunk], tmp_path: Path
) -> None:
    """``count-total`` (a number is attributed to no one) and ``every-nth`` (one request in 5,000, more
    than the audit sends) audit clean, and the clean verdict names both classes as not checked."""
    code, report = _audit(make_round3_service(style, chunks), tmp_path / "unseen.json")
    assert code == 0 and report["verdict"] == "clean"
    reason = report["isolation"]["reason"]
    assert "not checked by probing" in reason and "counts" in reason and "detection power" in reason
    assert (
        report["asking"]["detection_power"]["one_in_at_power"] < 5000
    )  # the stated power is below the leak's rarity


def test_a_rare_leak_within_the_detection_power_is_caught(chunks: list[Chunk], tmp_path: Path) -> None:
    code, report = _audit(make_round3_service("every-nth", chunks, every=50), tmp_path / "rare.json")
    assert code == 1 and report["verdict"] == "leak"


def test_without_jwt_keys_the_forged_tokens_are_not_applicable_with_the_reason(
    chunks: list[Chunk], tmp_path: Path
) -> None:
    """Opaque keys cannot be forged: the two rows say so (the clean verdict's limits sentence names the
    class: ``test_a_leak_probing_cannot_see_is_clean_only_with_the_limit_stated``)."""
    service = make_round3_service("tenant-list", chunks, honest=True)
    keys = _keys_file(
        tmp_path / "opaque.toml", {"acme": "rk_a1b2c3", "globex": "rk_d4e5f6", "initech": "rk_g7"}
    )
    _, report = _audit(service, tmp_path / "opaque.json", "--endpoint-keys", keys)
    rows = [r for r in report["asking"]["mutations"] if r["mutation"].startswith("<caller>'s JWT")]
    assert len(rows) == 2 and all(not r["applicable"] and NO_JWT_KEYS in r["reason"] for r in rows)


def test_forged_tokens_swap_the_claim_and_keep_or_drop_the_signature() -> None:
    token = signed_token("acme")
    assert names_tenant(token, "acme") and not names_tenant(token, "globex")
    assert not names_tenant("rk_opaque", "acme") and forge("rk_opaque", "acme", "globex", "alg-none") is None
    swapped = forge(token, "acme", "globex", "claim-swap")
    none = forge(token, "acme", "globex", "alg-none")
    assert swapped is not None and none is not None
    assert swapped.split(".")[0] == token.split(".")[0] and swapped.split(".")[2] == token.split(".")[2]
    claims = json.loads(base64.urlsafe_b64decode(swapped.split(".")[1] + "=="))
    assert claims["tenant"] == "globex" and claims["sub"] == "svc-acme"  # only the claim naming the caller
    head = json.loads(base64.urlsafe_b64decode(none.split(".")[0] + "=="))
    assert head["alg"] == "none" and none.endswith(".") and none.split(".")[1] == swapped.split(".")[1]


def test_the_http_retriever_reads_server_sent_events() -> None:
    def handle(request: Request) -> Reply:
        stream = b': keep-alive\n\nevent: hit\ndata: {"chunk_id": "a", "score": 2}\n\n'
        stream += b'id: 2\ndata: [{"chunk_id": "b"},\ndata:  {"chunk_id": "c"}]\n\ndata: [DONE]\n\n'
        if request.json()["query"] == "empty":
            stream = b"data: [DONE]\n\n"
        return Reply(body=stream, headers={"content-type": "text/event-stream; charset=utf-8"})

    async def run(retriever: HttpRetriever) -> tuple[Any, Any]:
        got = await retriever.search(tenant_id="a", query="q", top_k=3)
        empty = await retriever.search(tenant_id="a", query="empty", top_k=3)
        await retriever.aclose()
        return got, empty

    with LocalServer(handle) as server:
        got, empty = asyncio.run(run(HttpRetriever(server.url)))
    assert [c["chunk_id"] for c in got] == ["a", "b", "c"] and got[0]["score"] == 2 and list(empty) == []


def test_an_earlier_value_of_a_repeated_json_key_is_kept_for_the_checks() -> None:
    parsed = json.loads(
        '{"results": [1], "total": 2, "results": [3], "results": [4]}', object_pairs_hook=keep_repeated_keys
    )
    assert parsed["results"] == [4] and parsed["total"] == 2  # what a client keeps: the last value
    assert [v for k, v in parsed.items() if k.startswith("results#")] == [[1], [3]]
    assert json.loads('{"a": 1, "b": 2}', object_pairs_hook=keep_repeated_keys) == {"a": 1, "b": 2}


def test_only_same_origin_307_and_308_redirects_are_followed() -> None:
    url = "http://127.0.0.1:8000/search?x=1"
    assert same_origin_redirect(url, 307, "/search/export") == "http://127.0.0.1:8000/search/export"
    assert same_origin_redirect(url, 308, "http://127.0.0.1:8000/v2") == "http://127.0.0.1:8000/v2"
    assert same_origin_redirect(url, 307, "http://evil.example:8000/search") is None  # the key stays home
    assert same_origin_redirect(url, 307, "https://127.0.0.1:8000/search") is None
    assert (
        same_origin_redirect(url, 302, "/search/export") is None
        and same_origin_redirect(url, 307, None) is None
    )
