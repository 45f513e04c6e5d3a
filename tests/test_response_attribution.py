"""Whole-response attribution (issue 22 items 1 and 7, issue 25 item 5): every value of a response,
beside the result list too, at any depth and after decoding, attributed from the corpus with its JSON
path; tenant-exclusive terms; the response leaks in the proofs, each with an honest twin, over Python
and a real local HTTP server; the report's leak records bounded."""

from __future__ import annotations

import asyncio
import base64
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from conftest import KB
from ragaudit.cli.main import main
from ragaudit.corpus.chunkers import chunk_corpus, make_chunker
from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.corpus.model import Chunk, Document
from ragaudit.data.run import RankedItem
from ragaudit.report.terminal import render_terminal
from ragaudit.retrieval.protocol import RetrievedList
from ragaudit.security.item_fields import value_fields
from ragaudit.security.leaky import LEAKY, RESPONSE_LEAKS, make_leaky
from ragaudit.security.leaky_response import RESPONSE_STYLES, ResponseLeakRetriever, ResponseList
from ragaudit.security.ownership import OwnershipIndex
from ragaudit.security.probes import Probe, generate_probes
from ragaudit.security.response_fields import ResponseEnvelope, envelope_of, response_evidence
from ragaudit.security.tenant_audit import AuditOptions, TenantAudit, audit_tenants
from servers import LocalServer, Reply, Request

CORPUS = str(KB / "corpus.jsonl")
ONE_PASS: dict[str, Any] = {"top_k_values": (10,), "concurrency_levels": (8,), "rounds": 1}


@pytest.fixture(scope="module")
def kb() -> Corpus:
    return load_corpus(KB / "corpus.jsonl")


@pytest.fixture(scope="module")
def chunks(kb: Corpus) -> list[Chunk]:
    return chunk_corpus(kb, make_chunker("whole"))


@pytest.fixture(scope="module")
def ownership(kb: Corpus, chunks: list[Chunk]) -> OwnershipIndex:
    return OwnershipIndex.build(kb.documents, chunks)


@pytest.fixture(scope="module")
def few(kb: Corpus) -> list[Probe]:
    return generate_probes(kb.documents, per_tenant=6, generic=["confidential severance clauses"])


def audit(retriever: Any, index: OwnershipIndex, probes: list[Probe], **options: Any) -> TenantAudit:
    return asyncio.run(audit_tenants(retriever, index, probes, AuditOptions(progress=False, **options)))


def foreign(index: OwnershipIndex, body: Any, caller: str, query: str = "") -> dict[str, set[str]]:
    """JSON path -> the tenants that make the value there a leak for ``caller``."""
    found: dict[str, set[str]] = {}
    for evidence in response_evidence(index, ResponseEnvelope(body, "$.results"), query):
        if evidence.foreign(caller):
            found.setdefault(evidence.path, set()).update(evidence.foreign(caller))
    return found


# ------------------------------------------------------------------------------------ every value


def test_every_value_at_any_depth_and_decoded_has_a_json_path() -> None:
    @dataclass
    class Inner:
        note: str

    text = "Northwind Logistics renewal"
    blob = base64.b64encode(json.dumps({"hits": [{"text": text}]}).encode()).decode()
    body = {
        "results": [{"chunk_id": "x", "content": "never walked here"}],
        "debug": {"trace": blob, "explain": json.dumps({"top": [text]})},
        "links": {"next": "/s?preview=Northwind%20Logistics%20renewal"},
        "html": "&#78;&#111;&#114;&#116;&#104;&#119;&#105;&#110;&#100; Logistics renewal",
        "object": Inner(text),
        "facets": {"customer": ["a", "b", text], "counts": {text: 3}},
    }
    paths = {f.path: f.value for f in value_fields(body, "$", skip=frozenset({"$.results"}))}
    assert paths["$.debug.trace|base64|json.hits[0].text"] == text
    assert paths["$.debug.explain|json.top[0]"] == text
    assert paths["$.links.next|url"] == "/s?preview=" + text
    assert paths["$.html|html"] == text
    assert paths["$.object.note"] == text and paths["$.facets.customer[2]"] == text
    assert paths[f'$.facets.counts["{text}"](key)'] == text  # a key that is data is a value too
    assert not any(p.startswith("$.results") for p in paths)


def test_exclusive_terms_ids_titles_and_text_beside_the_results(ownership: OwnershipIndex) -> None:
    acme = ownership.documents["acme-refund-policy-v2"]
    globex = ownership.documents["globex-contract-umbrella-partnership"]
    leaky = {
        "facets": {"customer": ["Northwind Logistics", "Umbrella Savings Bank"], "lang": ["en"]},
        "see_also": [acme.doc_id, globex.doc_id],
        "suggest": [globex.title],
        "debug": {"candidates": [{"snippet": " ".join(globex.text.split()[5:30])}]},
    }
    found = foreign(ownership, leaky, "acme")
    assert found == {
        "$.facets.customer[1]": {"globex"},
        "$.see_also[1]": {"globex"},
        "$.suggest[0]": {"globex"},
        "$.debug.candidates[0].snippet": {"globex"},
    }
    assert foreign(ownership, leaky, "initech")["$.facets.customer[0]"] == {"acme"}


def test_honest_extras_stay_clean(ownership: OwnershipIndex) -> None:
    """Own-tenant related ids, scores, own snippets and names, pagination numbers, generic words, single
    capitalised words and an echo of the query the caller sent are no evidence."""
    acme = [d for d in ownership.documents.values() if d.tenant_id == "acme"]
    honest = {
        "results": [{"chunk_id": "ignored-here"}],
        "total": 12,
        "page": "2",
        "took_ms": 3,
        "related": [d.doc_id for d in acme[:4]],
        "facets": {"customer": ["Northwind Logistics"], "category": ["Ledger", "Billing"], "lang": "en"},
        "suggest": [acme[0].title, "Billing FAQ", "pricing"],
        "debug": {
            "query": "Umbrella Savings Bank partnership terms",
            "rewritten": "umbrella savings bank partnership terms OR agreement",
            "snippet": " ".join(acme[1].text.split()[:25]),
            "scores": [12.5, 3.25],
            "engine": "bm25 v2.1",
        },
        "cursor": base64.b64encode(json.dumps({"offset": 10, "size": 10}).encode()).decode(),
    }
    assert foreign(ownership, honest, "acme", query="Umbrella Savings Bank partnership terms") == {}
    # without the query the echo names globex's customer: the query is what makes it the caller's own words
    assert foreign(ownership, honest, "acme") != {}


def test_ids_in_lists_under_any_key_but_never_short_values_alone() -> None:
    index = OwnershipIndex.build(
        [
            Document("doc-a1", "a", "Alpha keeps its rates in one table for every customer."),
            Document("2", "b", "Beta notes: the quarterly review of volume discounts is in May."),
            Document("doc-b7", "b", "Beta lists the volume discounts for every region."),
        ]
    )
    body = {"see": ["doc-a1", "doc-b7"], "pages": ["2", "3"], "page": "2", "alone": "doc-b7", "x": ["2"]}
    assert foreign(index, body, "a") == {"$.see[1]": {"b"}, "$.alone": {"b"}}


def test_python_results_carry_the_rest_of_the_response_as_attributes_or_objects() -> None:
    plain: list[Any] = [{"chunk_id": "a"}]
    assert envelope_of(plain) is None
    listed = ResponseList(plain)
    listed.facets = {"customer": ["x"]}  # type: ignore[attr-defined]
    envelope = envelope_of(listed)
    assert envelope is not None and envelope.body == {"facets": {"customer": ["x"]}}
    assert not envelope.holds_items and envelope.item_path(2) == "$[2]"
    wrapped = envelope_of(RetrievedList([], {"results": [], "debug": {}}, "$.results"))
    assert wrapped is not None and wrapped.items_path == "$.results" and wrapped.holds_items


# ------------------------------------------------------------------------------------ the proofs


@pytest.mark.parametrize("style", RESPONSE_STYLES)
def test_each_response_leak_is_caught_and_its_honest_twin_stays_clean(
    style: str, chunks: list[Chunk], ownership: OwnershipIndex, few: list[Probe]
) -> None:
    leaky = audit(make_leaky(f"response-{style}", chunks), ownership, few, **ONE_PASS)
    assert leaky.verdict() == "leak", style
    for leak in leaky.leaks:
        assert leak.owners and leak.caller not in leak.owners and leak.fields
        assert all(f["path"].startswith("$") and f["owner"] for f in leak.fields)
    paths = {f["path"] for leak in leaky.leaks for f in leak.fields}
    expected = {
        "debug": "$.debug.candidates[",
        "suggest": "$.suggest[",
        "facets": "$.facets.customer",  # customer[i] and the keys of customer_counts["..."](key)
        "aggregations": "$.aggregations.",
        "related": "$.related[",
        "see-also": "$[",  # a dataclass hit's own attribute: $[2].see_also[0]
        "base64": "$.cursor|base64|json.seen[",
        "url": "$.links.next|url",
        "html": "$[",
        "json-string": "$.explain|json.hits[",
    }[style]
    assert all(p.startswith(expected) for p in paths), sorted(paths)[:5]
    if style == "facets":  # the names as keys of a counts map are caught too
        assert any(p.startswith("$.facets.customer_counts[") and p.endswith("(key)") for p in paths)
    honest = audit(ResponseLeakRetriever(chunks, style, honest=True), ownership, few, **ONE_PASS)
    assert honest.verdict() == "clean" and honest.checked_chunks > 0, [x.to_json() for x in honest.leaks[:2]]


def test_the_proofs_count_the_response_leaks() -> None:
    assert len(RESPONSE_LEAKS) == len(RESPONSE_STYLES) == 10 and set(RESPONSE_LEAKS) <= set(LEAKY)


def _serve(service: ResponseLeakRetriever) -> Any:
    def handle(request: Request) -> Reply:
        body = request.json()
        tenant = body.get("tenant_id")
        if not isinstance(tenant, str) or not tenant.strip():
            return Reply(status=400, body={"detail": "tenant required"})
        return Reply(body=service.body(tenant, body["query"], body["top_k"]))

    return handle


@pytest.mark.parametrize("style", RESPONSE_STYLES)
def test_http_services_leaking_beside_the_results_fail_and_their_twins_pass(
    style: str, chunks: list[Chunk], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    small = ["--probes-per-tenant", "3", "--hostile-probes", "1", "--budget", "0"]
    small += ["--concurrency-levels", "8", "--top-k-values", "10", "--no-progress"]
    for honest in (False, True):
        out = tmp_path / f"{honest}.json"
        with LocalServer(_serve(ResponseLeakRetriever(chunks, style, honest))) as server:
            code = main(
                ["audit-tenants", "--corpus", CORPUS, "--endpoint", server.url, "--out", str(out), *small]
            )
        report = json.loads(out.read_text(encoding="utf-8"))
        printed = capsys.readouterr().out
        if honest:
            assert code == 0 and report["verdict"] == "clean", report["leaks"]["records"][:2]
            continue
        assert code == 1 and report["verdict"] == "leak" and "verdict: LEAK" in printed
        paths = [f["path"] for r in report["leaks"]["records"] for f in r["fields"]]
        assert paths and all(p.startswith("$.") for p in paths)
        if style in ("see-also", "html"):  # in the chunks: the path names the result
            assert all(p.startswith("$.results[") for p in paths)
        else:
            assert all(r["where"] == "response" and r["rank"] == 0 for r in report["leaks"]["records"])


# ------------------------------------------------------------------------------------ report size


def test_the_report_lists_the_first_records_and_counts_every_leak(
    chunks: list[Chunk], ownership: OwnershipIndex, few: list[Probe]
) -> None:
    result = audit(make_leaky("post-filter-backfill", chunks), ownership, few, max_records=7, **ONE_PASS)
    report = result.to_dict()
    leaks = report["leaks"]
    assert leaks["count"] == len(result.leaks) > 7 and leaks["records_listed"] == len(leaks["records"]) == 7
    assert sum(leaks["by_class"].values()) == leaks["count"] == sum(leaks["by_part"].values())
    assert leaks["to_hostile_ids"] == sum(1 for x in result.leaks if x.hostile)
    printed = render_terminal(report)
    assert f"LEAKS: {leaks['count']} foreign chunks served" in printed
    assert f"the report lists the first 7 of {leaks['count']} leak records" in printed
    with pytest.raises(ValueError, match="max_records"):
        AuditOptions(max_records=-1)


def test_cli_max_records(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "audit.json"
    code = main(
        ["audit-tenants", "--corpus", CORPUS, "--retriever", "ragaudit.security.leaky:demo_backfill",
         "--probes-per-tenant", "3", "--budget", "0", "--concurrency-levels", "8", "--top-k-values", "10",
         "--no-progress", "--max-records", "5", "--out", str(out)]
    )  # fmt: skip
    report = json.loads(out.read_text(encoding="utf-8"))
    assert code == 1 and len(report["leaks"]["records"]) == 5 < report["leaks"]["count"]
    assert f"first 5 of {report['leaks']['count']}" in capsys.readouterr().out


def test_item_paths_name_the_result(ownership: OwnershipIndex) -> None:
    """A foreign value inside a chunk is reported at ``$.results[i]...`` (HTTP) or ``$[i]...`` (Python)."""
    acme = ownership.documents["acme-refund-policy-v2"]
    globex = ownership.documents["globex-contract-umbrella-partnership"]
    item = RankedItem(acme.doc_id, content=acme.text, extra={"see_also": [acme.doc_id, globex.doc_id]})
    probe = Probe("p", "sentence", "refunds", "acme", acme.doc_id)
    from ragaudit.security.leak_checker import LeakChecker as _Checker

    checker = _Checker(ownership)
    checker.check(probe, "acme", [item, item], "refunds", ResponseEnvelope({"results": []}, "$.results"))
    assert [f["path"] for leak in checker.leaks for f in leak.fields] == [
        "$.results[0].see_also[1]",
        "$.results[1].see_also[1]",
    ]


@pytest.mark.parametrize(("factory", "expected"), [("demo_response_leak", 1), ("demo_response_honest", 0)])
def test_the_cli_defaults_catch_the_facet_leak_and_pass_its_twin(
    factory: str, expected: int, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The audit-tenants defaults (24 probes per tenant, canaries, 3 rounds, top_k 1/10/50, hostile ids)."""
    out = tmp_path / "audit.json"
    code = main(
        ["audit-tenants", "--corpus", CORPUS, "--canaries", str(KB / "canaries.jsonl"), "--no-progress",
         "--retriever", f"ragaudit.security.leaky:{factory}", "--out", str(out)]
    )  # fmt: skip
    report = json.loads(out.read_text(encoding="utf-8"))
    assert code == expected and report["asking"]["requests"]["total"] >= 3000
    if expected:
        assert set(report["leaks"]["by_class"]) == {"response:term"}
        assert all(
            f["path"].startswith("$.facets.customer") for r in report["leaks"]["records"] for f in r["fields"]
        )
    else:
        assert report["verdict"] == "clean" and report["checked_chunks"] > 0
    capsys.readouterr()


def test_a_callers_own_canary_does_not_hide_a_foreign_term_beside_it() -> None:
    from ragaudit.security.canaries import Canary

    index = OwnershipIndex.build(
        [
            Document("a1", "a", "Alpha signed the Bluefin Harbour deal under rider AX-1001 this year."),
            Document("b1", "b", "Beta renewed the Copper Ridge Mining contract for three more years."),
        ],
        canaries=[Canary("a", "rider AX-1001", "a1")],
    )
    found = foreign(index, {"note": "rider AX-1001 and Copper Ridge Mining"}, "a")
    assert found == {"$.note": {"b"}}
    assert foreign(index, {"note": "rider AX-1001 and Bluefin Harbour"}, "a") == {}
    assert foreign(index, {"note": "rider AX-1001"}, "b") == {"$.note": {"a"}}
