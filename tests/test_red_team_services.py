"""Leaky services in styles the earlier proofs did not hold (a red team of ``audit-tenants``), each with an
honest twin: leaks inside what looks like the caller's own result (security/leaky_context.py, Python
retrievers) and leaks in how the answer travels (security/leaky_transport.py, real HTTP services on
127.0.0.1). Every leaky one must fail the audit and every twin must stay clean; before the fixes, the
default audit called ``neighbour-window``, ``next-cursor``, ``next-link``, ``debug-header`` and
``error-preview`` clean, the honest ``query-echo`` a leak, and the ``merged-context`` and
``composite-id`` twins and both ``ndjson`` services unverifiable (docs/security.md, "Red team")."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import pytest

from conftest import KB, SMALL_CLI
from ragaudit.cli.main import main
from ragaudit.corpus.loading import load_corpus
from ragaudit.corpus.model import Chunk, Document
from ragaudit.data.run import RankedItem
from ragaudit.retrieval.http import HttpRetriever
from ragaudit.security.canaries import load_canaries
from ragaudit.security.leaky import CONTEXT_LEAKS, LEAKY, TRANSPORT_LEAKS
from ragaudit.security.leaky_context import CONTEXT_STYLES, make_context_service
from ragaudit.security.leaky_transport import TRANSPORT_STYLES, make_transport_service
from ragaudit.security.ownership import OwnershipIndex
from ragaudit.security.pagination_tokens import next_page_extras
from ragaudit.security.probes import Probe, generate_probes
from ragaudit.security.query_echo import is_near_echo
from servers import LocalServer, Reply, Request
from test_tenant_audit import audit

CORPUS = str(KB / "corpus.jsonl")
SMALL: dict[str, Any] = {"top_k_values": (10,), "concurrency_levels": (8,), "rounds": 1}


@pytest.fixture(scope="module")
def demo(chunks: list[Chunk]) -> tuple[OwnershipIndex, list[Probe]]:
    kb = load_corpus(KB / "corpus.jsonl")
    canaries = load_canaries(KB / "canaries.jsonl", kb.documents)
    index = OwnershipIndex.build(kb.documents, chunks, canaries)
    return index, generate_probes(kb.documents, canaries=canaries, per_tenant=6)


# ------------------------------------------------------------------------------------ the rules


def test_a_foreign_passage_inside_the_callers_own_text_is_a_leak() -> None:
    own = "Alpha keeps its delivery rates in one table for every customer of the northern region."
    theirs = "Beta pays Harbor Cold Storage eleven thousand dollars each quarter for frozen goods storage."
    other = "Alpha also publishes a quarterly newsletter with the changes to its warehouse opening hours."
    index = OwnershipIndex.build(
        [Document("a1", "a", own), Document("a2", "a", other), Document("b1", "b", theirs)]
    )
    mixed = index.attribute_item(RankedItem("a1", content=f"{own} {theirs}"))
    assert mixed.foreign_owners("a") == {"b"} and mixed.foreign_method("a") == "content"
    merged_own = index.attribute_item(RankedItem("ctx-1", content=f"{own} {other}"))
    assert merged_own.attributed and not merged_own.is_leak("a")  # several of the caller's own documents
    short = index.attribute_item(RankedItem("a1", content=f"{own} Beta pays Harbor Cold"))
    assert not short.is_leak("a")  # fewer than 8 consecutive foreign words: no passage


def test_ids_inside_urls_prose_and_composite_ids_name_their_documents() -> None:
    index = OwnershipIndex.build(
        [Document("acme-guide-2", "a", "Alpha keeps its rates."), Document("beta-pricing-v3", "b", "Beta.")]
    )
    assert index.document_of("beta-pricing-v3:c0").doc_id == "beta-pricing-v3"  # type: ignore[union-attr]
    assert index.document_of("beta-pricing-v3::7") is not None and index.document_of("beta-pricing") is None
    item = RankedItem(
        "acme-guide-2",
        content="Alpha keeps its rates.",
        metadata={"source_url": "https://kb.example.com/docs/beta-pricing-v3?ref=search"},
        extra={"why": "boosted by neighbour beta-pricing-v3 (weight 0.3)", "page": "2"},
    )
    found = index.attribute_item(item)
    assert {e.path for e in found.foreign_fields("a")} == {"metadata.source_url", "why"}


def test_an_echo_of_the_query_is_no_evidence_but_foreign_text_beside_it_is() -> None:
    assert is_near_echo(
        "masteer subscription agreement northwind logistics",
        "master subscription agreement northwind logistics",
    )
    assert not is_near_echo("harbor cold storage runs six warehouses", "harbor storage")
    theirs = "Beta pays Harbor Cold Storage eleven thousand dollars each quarter for frozen goods storage."
    index = OwnershipIndex.build([Document("a1", "a", "Alpha keeps its rates."), Document("b1", "b", theirs)])
    echoed = RankedItem("a1", content="Alpha keeps its rates.", extra={"matched_query": theirs})
    assert not index.attribute_item(echoed, theirs).is_leak("a")  # the caller sent that text itself
    assert index.attribute_item(echoed, "rates").is_leak("a")  # not what it asked: another tenant's text


def test_next_page_tokens_are_read_from_the_answer() -> None:
    cursor = next_page_extras({"results": [], "next_cursor": "abc"})
    assert cursor is not None and cursor.body == {"cursor": "abc"} and cursor.params == {"cursor": "abc"}
    token = next_page_extras({"data": [], "nextPageToken": "t1"})
    assert token is not None and token.body == {"pageToken": "t1"}
    link = next_page_extras({"results": [], "links": {"next": "/search?page_token=XYZ&size=10"}})
    assert link is not None and link.params == {"page_token": "XYZ", "size": "10"}
    graph = next_page_extras({"pageInfo": {"endCursor": "e9", "hasNextPage": True}})
    assert graph is not None and graph.body == {"after": "e9"}
    assert next_page_extras({"results": [], "next_cursor": None, "total": 3}) is None
    assert next_page_extras([{"chunk_id": "x"}]) is None


# ------------------------------------------------------------------------------------ the proofs


def test_every_red_team_style_is_in_the_registry() -> None:
    assert tuple(f"context-{s}" for s in CONTEXT_STYLES) == CONTEXT_LEAKS and set(CONTEXT_LEAKS) <= set(LEAKY)
    assert TRANSPORT_LEAKS == TRANSPORT_STYLES and len(CONTEXT_STYLES) + len(TRANSPORT_STYLES) == 11


@pytest.mark.parametrize("style", CONTEXT_STYLES)
def test_each_context_leak_is_caught_and_its_twin_is_clean(
    style: str, chunks: list[Chunk], demo: tuple[OwnershipIndex, list[Probe]]
) -> None:
    leaky = audit(make_context_service(style, chunks), *demo, **SMALL)
    assert leaky.verdict() == "leak", style
    methods = {leak.attributed_by for leak in leaky.leaks}
    expected = {
        "query-echo": "content@explanation",
        "neighbour-window": "content",
        "merged-context": "content",
        "composite-id": "id",
        "source-url": "id@metadata.source_url",
    }[style]
    assert any(expected in m.split("+") for m in methods), sorted(methods)[:5]
    honest = audit(make_context_service(style, chunks, honest=True), *demo, **SMALL)
    assert honest.verdict() == "clean", (style, [x.to_json() for x in honest.leaks[:2]])
    assert honest.unattributed_count == 0 and honest.checked_chunks > 0


def _wire(service: Any) -> Any:
    def handle(request: Request) -> Reply:
        params = dict(parse_qsl(urlsplit(request.path).query))
        status, body, headers = service.respond(request.json(), request.headers, params)
        return Reply(status=status, body=body, headers=headers)

    return handle


def _audit_endpoint(url: str, out: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    code = main(
        ["audit-tenants", "--corpus", CORPUS, "--endpoint", url, "--out", str(out), "--no-progress", *extra]
    )
    return code, json.loads(out.read_text(encoding="utf-8"))


FOUND_AT = {
    "next-cursor": "next page (the service's own token)",
    "next-link": "next page (the service's own token)",
    "debug-header": "$headers",
    "error-preview": "$error.preview",
    "ndjson": None,
    "partial-error": "$error.partial",
}


@pytest.mark.parametrize("style", TRANSPORT_STYLES)
def test_each_transport_leak_fails_over_http_and_its_twin_does_not(
    style: str, chunks: list[Chunk], tmp_path: Path
) -> None:
    with LocalServer(_wire(make_transport_service(style, chunks))) as server:
        code, report = _audit_endpoint(server.url, tmp_path / "leaky.json", *SMALL_CLI)
    assert code == 1 and report["verdict"] == "leak", (style, report["isolation"])
    records = report["leaks"]["records"]
    where = FOUND_AT[style]
    if where is not None and where.startswith("$"):
        paths = {f["path"] for r in records for f in r.get("fields", [])}
        assert any(p.startswith(where) for p in paths), sorted(paths)[:5]
    elif where is not None:
        rows = {r["mutation"]: r for r in report["asking"]["mutations"]}
        assert rows[where]["leaks"] > 0 and {r["asked"]["mutation"] for r in records} == {where}
    with LocalServer(_wire(make_transport_service(style, chunks, honest=True))) as server:
        code, report = _audit_endpoint(server.url, tmp_path / "honest.json", *SMALL_CLI)
    assert report["leaks"]["count"] == 0, report["leaks"]["records"][:2]
    if style == "partial-error":  # no ranking on long queries: failed requests, so never clean
        assert code == 1 and report["verdict"] == "incomplete"
    else:
        assert code == 0 and report["verdict"] == "clean", report["isolation"]
        assert report["unattributed"]["count"] == 0


def test_the_http_retriever_keeps_headers_error_bodies_and_reads_ndjson() -> None:
    from ragaudit.errors import PermanentRetrievalError

    def handle(request: Request) -> Reply:
        query = request.json()["query"]
        if query == "stream":
            rows = b'{"chunk_id": "a"}\n\n{"chunk_id": "b", "score": 1}\n'
            return Reply(body=rows, headers={"Content-Type": "application/x-ndjson", "X-Trace": "t-1"})
        if query == "one-line":
            return Reply(body=b'{"chunk_id": "a"}\n', headers={"Content-Type": "application/x-ndjson"})
        return Reply(status=403, body={"detail": "no", "preview": ["x"]}, headers={"X-Why": "policy"})

    async def run(retriever: HttpRetriever) -> tuple[Any, Any, BaseException]:
        stream = await retriever.search(tenant_id="a", query="stream", top_k=3)
        single = await retriever.search(tenant_id="a", query="one-line", top_k=3)
        try:
            await retriever.search(tenant_id="a", query="refuse", top_k=3)
        except PermanentRetrievalError as exc:
            refused: BaseException = exc
        await retriever.aclose()
        return stream, single, refused

    with LocalServer(handle) as server:
        stream, single, refused = asyncio.run(run(HttpRetriever(server.url)))
    assert [c["chunk_id"] for c in stream] == ["a", "b"] and stream.headers["x-trace"] == "t-1"
    assert "content-length" not in stream.headers and [c["chunk_id"] for c in single] == ["a"]
    assert refused.response == {"detail": "no", "preview": ["x"]}
    assert refused.headers["x-why"] == "policy"
