"""The attribution half of the tenant audit (issue 10, item 3): every returned field inspected (title,
snippet, highlight, nested metadata, source ids; Python retrievers and HTTP services), templated
near-duplicates attributed by the parts that differ between tenants, entity-routing probes,
unattributable output reported as *not verified* (exit 1 unless --allow-unattributed; never clean when
nothing was attributed) in the JSON, terminal, Markdown, HTML and the gate; honest services clean."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conftest import KB
from ragaudit.cli.main import main
from ragaudit.corpus.chunkers import chunk_corpus, make_chunker
from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.corpus.model import Chunk, Document
from ragaudit.data.run import RankedItem, to_ranked_items
from ragaudit.evaluation.compare import LoadedReport
from ragaudit.gates.checks import security_gate
from ragaudit.gates.policy import GatePolicy
from ragaudit.report.html import render_html
from ragaudit.report.kinds.tenant_audit import KIND as AUDIT_KIND
from ragaudit.report.markdown import render_markdown
from ragaudit.report.view import build_view
from ragaudit.retrieval.bm25 import BM25Retriever
from ragaudit.retrieval.protocol import RetrievedChunk
from ragaudit.security.leaky import LEAKY, OUTPUT_LEAKS, make_leaky
from ragaudit.security.leaky_output import LEAKY_FIELDS, analysed
from ragaudit.security.ownership import OWNER_MARGIN, OwnershipIndex
from ragaudit.security.probes import Probe, generate_probes
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


# ------------------------------------------------------------------------------------ every field


def test_a_foreign_value_in_any_field_is_a_leak_and_own_values_are_not(ownership: OwnershipIndex) -> None:
    own = ownership.documents["acme-refund-policy-v2"]
    other = ownership.documents["globex-contract-umbrella-partnership"]
    base: dict[str, Any] = {"chunk_id": own.doc_id, "content": own.text, "tenant_id": "acme"}
    foreign_text = " ".join(other.text.split()[10:40])
    planted: dict[str, dict[str, Any]] = {
        "title": {"title": other.title},
        "snippet": {"snippet": foreign_text},
        "highlight": {
            "highlight": [
                " ".join(
                    f"<em>{w}</em>" if i % 3 == 0 else w
                    for i, w in enumerate(foreign_text.split()[a : a + 8])
                )
                for a in (0, 10, 20)
            ]
        },
        "metadata": {"metadata": {"lang": "en", "related": [{"docId": other.doc_id, "page": "2"}]}},
        "source_id": {"source_id": other.source_id},
        "nested text": {"extra": {"debug": {"explain": [{"passage": foreign_text}]}}},
        "short highlights": {"highlights": ["<em>Umbrella</em> Savings Bank", "term sheet"]},
    }
    for name, fields in planted.items():
        item = to_ranked_items([{**base, **fields}])[0]
        who = ownership.attribute_item(item)
        assert who.is_leak("acme") and who.foreign_owners("acme") == {"globex"}, name
        assert ownership.attribute(item.chunk_id, item.content).is_leak("acme") is False  # id + content alone
    mine = {
        "title": own.title,
        "snippet": " ".join(own.text.split()[5:35]),
        "highlight": [f"... {' '.join(own.text.split()[:6])} <em>refund</em> ..."],
        "metadata": {"doc_id": own.doc_id, "status": "active", "page": "2", "section": "Refunds"},
        "source_id": own.source_id,
        "highlights": [f"<em>{own.text.split()[3]}</em> {' '.join(own.text.split()[4:6])}"],
        "category": "Ledger",  # globex's product name, but not quoted text: short values are no evidence
    }
    assert not ownership.attribute_item(to_ranked_items([{**base, **mine}])[0]).is_leak("acme")
    shared_title = to_ranked_items([{**base, "title": "Billing FAQ"}])[0]  # every tenant has this title
    assert not ownership.attribute_item(shared_title).is_leak("acme")


def test_short_values_count_only_as_whole_titles_and_never_against_the_callers_own_text() -> None:
    index = OwnershipIndex.build(
        [
            Document("a1", "a", "Alpha keeps its rates in one table for every customer.", title="Rates"),
            Document(
                "a2", "a", "Delta notes: the quarterly review of volume discounts is in May.", title="Notes"
            ),
            Document(
                "b1", "b", "Gamma lists the volume discounts for every region.", title="Volume discounts"
            ),
            Document("c1", "c", "Kappa lists the discounts per seat.", title="Seat discounts"),
        ]
    )

    def leak(caller: str, **fields: Any) -> bool:
        return index.attribute_item(to_ranked_items([{"chunk_id": "x", **fields}])[0]).is_leak(caller)

    assert leak("c", section="Volume discounts") and not leak("b", section="Volume discounts")
    assert not leak("a", section="Volume discounts")  # a's own notes hold the phrase: boilerplate to a
    assert not leak("a", section="every region")  # not a title: short values are not attributed
    assert leak("a", metadata={"parent": {"doc_id": "b1"}}) and not leak("a", metadata={"paid": "b1"})


@pytest.mark.parametrize("field", LEAKY_FIELDS)
def test_a_service_leaking_through_one_field_is_caught_and_the_record_names_the_field(
    field: str, chunks: list[Chunk], ownership: OwnershipIndex, few: list[Probe]
) -> None:
    result = audit(make_leaky(f"field-{field.replace('_', '-')}", chunks), ownership, few, **ONE_PASS)
    assert result.verdict() == "leak"
    record = result.leaks[0].to_json()
    leaked = {f["field"].split(".")[0].split("[")[0] for leak in result.leaks for f in leak.fields}
    assert leaked == {field}, leaked
    # only the foreign evidence is named: fields, never the caller's own id or content
    assert all("@" in part for leak in result.leaks for part in leak.attributed_by.split("+"))
    assert record["fields"][0]["owner"] and result.leaks[0].caller not in record["fields"][0]["owner"]


def _serve(answer: Any) -> Any:
    def handle(request: Request) -> Reply:
        body = request.json()
        tenant = body.get("tenant_id")
        if not isinstance(tenant, str) or not tenant.strip():
            return Reply(status=400, body={"detail": "tenant required"})
        return Reply(body={"results": answer(tenant, body["query"], body["top_k"])})

    return handle


def _audit_endpoint(url: str, out: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    code = main(
        ["audit-tenants", "--corpus", CORPUS, "--endpoint", url, "--out", str(out), "--no-progress",
         "--probes-per-tenant", "6", "--budget", "0", "--concurrency-levels", "8", *extra]
    )  # fmt: skip
    return code, json.loads(out.read_text(encoding="utf-8"))


def _json_safe(hit: RetrievedChunk) -> dict[str, Any]:
    return json.loads(json.dumps(hit, default=str))  # type: ignore[no-any-return]


def test_an_http_service_leaking_titles_and_highlights_fails_the_audit(
    chunks: list[Chunk], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ids, content and labels are the caller's own; only the title and highlight fields are not."""
    leaky: Any = make_leaky("field-highlight", chunks)
    titles: Any = make_leaky("field-title", chunks)

    def answer(tenant: str, query: str, top_k: int) -> list[dict[str, Any]]:
        hits = [_json_safe(h) for h in leaky.answer(tenant, query, top_k)]
        for hit, titled in zip(hits, titles.answer(tenant, query, top_k), strict=False):
            hit["title"] = titled["title"]
        return hits

    with LocalServer(_serve(answer)) as server:
        code, report = _audit_endpoint(server.url, tmp_path / "audit.json")
    printed = capsys.readouterr().out
    assert code == 1 and report["verdict"] == "leak" and "verdict: LEAK" in printed
    fields = {f["field"].split("[")[0] for r in report["leaks"]["records"] for f in r.get("fields", [])}
    assert fields == {"title", "highlight"}
    assert all(r["claimed_tenant"] == r["caller"] for r in report["leaks"]["records"])


def test_an_honest_http_service_with_highlights_snippets_and_metadata_stays_clean(
    chunks: list[Chunk], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Fewer than top_k results, its own ids (prefixed), the title, a snippet, highlighted fragments and
    metadata of its own documents, and the boilerplate its own corpus holds: clean, exit 0."""
    bm25 = BM25Retriever.from_chunks(chunks)

    def answer(tenant: str, query: str, top_k: int) -> list[dict[str, Any]]:
        out = []
        for hit in bm25.search_many(tenant, [query], top_k)[0][:4]:
            words = hit["content"].split()
            out.append(
                {
                    "chunk_id": f"{tenant}/{hit['chunk_id']}",
                    "score": hit["score"],
                    "tenant_id": tenant,
                    "content": hit["content"],
                    "title": hit["metadata"]["title"],
                    "snippet": " ".join(words[:25]) + " ...",
                    "highlight": [
                        " ".join(f"<em>{w}</em>" if i == 2 else w for i, w in enumerate(words[:7]))
                    ],
                    "metadata": {**_json_safe(hit)["metadata"], "lang": "en", "page": 1},
                    "source_id": hit["source_id"],
                }
            )
        return out

    with LocalServer(_serve(answer)) as server:
        code, report = _audit_endpoint(server.url, tmp_path / "audit.json")
    assert code == 0 and report["verdict"] == "clean", report["leaks"]["records"][:2]
    assert report["unattributed"]["count"] == 0 and report["isolation"]["state"] == "pass"
    assert "tenant isolation: pass" in capsys.readouterr().out


# ------------------------------------------------------------------------------------ templates

NAMES = ["Harlow Freight", "Quenby Dairy", "Oskarsson Tools"]
TEMPLATE = (
    "Master services agreement between Brightline Systems and {name}. The customer agrees to an annual "
    "commitment of {amount} dollars payable in quarterly installments. Support requests are answered "
    "within one business day and critical incidents within two hours. Either party may terminate this "
    "agreement with ninety days written notice. Data is stored in the region chosen at signup and is "
    "deleted thirty days after termination. Service credits apply when monthly availability falls below "
    "the agreed level. Invoices are issued on the first day of each quarter and are due within thirty "
    "days. Price changes are announced sixty days in advance. Any dispute is settled under the laws of "
    "the state of Delaware. Subcontractors follow the same confidentiality terms as the provider and its "
    "employees. Backups are kept for fourteen days and restored on request within one business day. "
    "Security reviews are carried out once a year by an independent firm and summarised for the customer."
)
BOILERPLATE = "Contact support for help with your account at any time of the day or night."


def templated_corpus(path: Path) -> Path:
    """Three tenants with the same long contract template (another name and amount), a shared
    boilerplate sentence, and two documents of their own."""
    rng = random.Random(11)
    docs = []
    for t, name in enumerate(NAMES):
        tenant = f"tenant{t + 1}"
        text = TEMPLATE.format(name=name, amount=40000 + 1375 * t)
        docs.append({"doc_id": f"{tenant}-msa", "tenant_id": tenant, "title": f"MSA {name}", "text": text})
        docs.append(
            {
                "doc_id": f"{tenant}-help",
                "tenant_id": tenant,
                "title": "Help",
                "text": f"{BOILERPLATE} {name} help desk.",
            }
        )
        docs.append(
            {
                "doc_id": f"{tenant}-notes",
                "tenant_id": tenant,
                "title": f"{name} notes",
                "text": f"{name} keeps {rng.randint(3, 90)} delivery vans in the {['north', 'east', 'south'][t]} depot.",
            }
        )
    out = path / "corpus.jsonl"
    out.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    return out


@pytest.fixture(scope="module")
def templated(tmp_path_factory: pytest.TempPathFactory) -> tuple[Corpus, list[Chunk], OwnershipIndex]:
    corpus = load_corpus(templated_corpus(tmp_path_factory.mktemp("templated")))
    pieces = chunk_corpus(corpus, make_chunker("whole"))
    return corpus, pieces, OwnershipIndex.build(corpus.documents, pieces)


def test_a_foreign_variant_of_a_template_is_attributed_by_the_parts_that_differ(templated: Any) -> None:
    index = templated[2]
    docs = index.documents
    theirs, mine = docs["tenant1-msa"], docs["tenant2-msa"]
    served = RankedItem("tenant2-msa", content=theirs.text, tenant_id="tenant2")  # their text, my id
    match = index.match_text(theirs.text)
    # the caller's own variant is within the margin of the best: containment alone names both tenants
    assert match.owners == {"tenant1", "tenant2", "tenant3"} and OWNER_MARGIN > 0
    assert index.attribute_item(served).foreign_owners("tenant2") == {"tenant1"}
    assert not index.attribute_item(RankedItem("x", content=mine.text)).is_leak("tenant2")  # my variant
    boiler = RankedItem("tenant2-help", content=BOILERPLATE)  # every tenant's corpus holds it
    assert not index.attribute_item(boiler).is_leak("tenant2") and index.attribute_item(boiler).attributed
    piece = " ".join(theirs.text.split()[:40])  # the template's opening: the name differs
    assert index.attribute_item(RankedItem("x", content=piece)).foreign_owners("tenant3") == {"tenant1"}
    shared_part = " ".join(theirs.text.split()[20:90])  # the template's common part only
    assert not index.attribute_item(RankedItem("x", content=shared_part)).is_leak("tenant3")


def test_a_service_that_serves_one_tenants_variant_to_all_is_caught_and_bm25_is_clean(templated: Any) -> None:
    corpus, pieces, index = templated
    probes = generate_probes(corpus.documents, per_tenant=6)
    leaky = audit(make_leaky("templated-variant", pieces), index, probes, **ONE_PASS)
    assert leaky.verdict() == "leak"
    assert {(leak.caller, leak.owners) for leak in leaky.leaks} == {
        ("tenant2", ("tenant1",)),
        ("tenant3", ("tenant1",)),
    }
    assert all(leak.claimed_tenant == leak.caller and "content" in leak.attributed_by for leak in leaky.leaks)
    clean = audit(BM25Retriever.from_chunks(pieces), index, probes, **ONE_PASS)
    assert clean.verdict() == "clean" and clean.unattributed_count == 0


# ------------------------------------------------------------------------------------ entity routing


def test_entity_probes_asked_as_other_tenants_catch_entity_routing(
    kb: Corpus, chunks: list[Chunk], ownership: OwnershipIndex
) -> None:
    entities = [p for p in generate_probes(kb.documents, per_tenant=24) if p.kind == "entity"]
    assert len({p.tenant_id for p in entities}) == 3
    result = audit(make_leaky("entity-routing", chunks), ownership, entities, hostile_probes=0, **ONE_PASS)
    assert result.verdict() == "leak"
    assert all(leak.probe.kind == "entity" and leak.probe.tenant_id in leak.owners for leak in result.leaks)
    assert {leak.caller for leak in result.leaks} == {"acme", "globex", "initech"}
    honest = audit(BM25Retriever.from_chunks(chunks), ownership, entities, hostile_probes=0, **ONE_PASS)
    assert honest.verdict() == "clean"


# ------------------------------------------------------------------------------------ not verified


class _PartlyOpaque:
    """Honest BM25, plus one chunk of the caller's own text, analysed (stemmed) under an opaque id."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.bm25 = BM25Retriever.from_chunks(chunks)

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        hits = await self.bm25.search(tenant_id=tenant_id, query=query, top_k=top_k)
        if hits:
            opaque = {
                "chunk_id": "vec-0001",
                "content": analysed(hits[0]["content"]),
                "source_id": "src-0001",
            }
            hits.append({**hits[0], **opaque, "metadata": {}})  # type: ignore[typeddict-item]
        return hits


def test_unattributable_output_is_not_verified_never_clean(
    chunks: list[Chunk], ownership: OwnershipIndex, few: list[Probe]
) -> None:
    opaque = audit(make_leaky("opaque-output", chunks), ownership, few, **ONE_PASS)
    assert opaque.leaks == [] and opaque.unattributed_count == opaque.checked_chunks > 0
    stemmed = analysed(ownership.documents["globex-faq-billing"].text)
    titled = ownership.attribute_item(RankedItem("vec-1", content=stemmed, extra={"title": "Billing FAQ"}))
    assert not titled.attributed  # a title every tenant has does not vouch for unattributable content
    untexted = ownership.attribute_item(
        RankedItem("vec-1", extra={"snippet": stemmed, "title": "Billing FAQ"})
    )
    assert untexted.attributed and not untexted.is_leak(
        "globex"
    )  # no content: the fields are what it returned
    # the stemmed snippet still holds globex's exclusive term "Dutch VAT": a leak to acme, by that term alone
    assert untexted.foreign_method("acme") == "term@snippet" and untexted.foreign_owners("acme") == {"globex"}
    own_id = "acme-faq-billing"  # the caller's own id vouches for no text found in any document
    assert not ownership.attribute_item(RankedItem(own_id, content=stemmed)).attributed
    assert ownership.attribute_item(RankedItem(own_id)).attributed  # an id alone: checked by id
    report = opaque.to_dict()
    assert report["verdict"] == "not-verified" and report["passed"] is False
    assert report["isolation"]["state"] == "not_verified" and "none of the" in report["isolation"]["reason"]
    allowed = audit(make_leaky("opaque-output", chunks), ownership, few, allow_unattributed=True, **ONE_PASS)
    assert allowed.verdict() == "not-verified"  # nothing attributed: never clean, whatever is allowed
    partly = audit(_PartlyOpaque(chunks), ownership, few, **ONE_PASS)
    assert partly.verdict() == "not-verified" and 0 < partly.unattributed_count < partly.checked_chunks
    reason = partly.to_dict()["isolation"]["reason"]
    assert f"{partly.unattributed_count} of {partly.checked_chunks} returned chunks" in reason
    assert "--allow-unattributed" in reason
    assert partly.leaks == []
    # --allow-unattributed never passes on the flag alone: the attributed share must reach --min-attributed
    share = 1 - partly.unattributed_count / partly.checked_chunks
    attributed = partly.checked_chunks - partly.unattributed_count
    stated = f"verified {attributed:,} of {partly.checked_chunks:,} returned chunks ({share:.1%})"
    assert partly.to_dict()["isolation"]["reason"].startswith(f"{stated}: ")  # the share, always
    below = audit(_PartlyOpaque(chunks), ownership, few, allow_unattributed=True, **ONE_PASS)
    assert share < 0.95 and below.verdict() == "not-verified"
    reason = below.to_dict()["isolation"]["reason"]
    assert reason.startswith(f"{stated}, below --min-attributed 0.95: NOT VERIFIED"), reason
    accepted = audit(
        _PartlyOpaque(chunks), ownership, few, allow_unattributed=True, min_attributed=0.5, **ONE_PASS
    )
    assert accepted.verdict() == "clean" and accepted.to_dict()["unattributed"]["allowed"] is True
    reason = accepted.to_dict()["isolation"]["reason"]
    assert (
        f"{stated}, at least --min-attributed 0.5" in reason and "accepted by --allow-unattributed" in reason
    )


class _OpaqueWithTitles:
    """Opaque output (unattributable), but every chunk keeps its real document title: the title leaks."""

    def __init__(self, chunks: list[Chunk]) -> None:
        self.opaque: Any = make_leaky("opaque-output", chunks)
        self.shared: Any = make_leaky("post-filter-backfill", chunks)

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[dict[str, Any]]:
        hits = self.opaque.answer(tenant_id, query, top_k)
        real = self.shared.shared.search(query, top_k)
        return [{**h, "title": r["metadata"]["title"]} for h, r in zip(hits, real, strict=False)]


def test_a_foreign_title_beside_unattributable_text_is_a_leak_not_just_unverified(
    chunks: list[Chunk], ownership: OwnershipIndex, few: list[Probe]
) -> None:
    result = audit(_OpaqueWithTitles(chunks), ownership, few, hostile_probes=0, **ONE_PASS)
    assert result.verdict() == "leak" and result.unattributed_count > 0
    assert all(part.endswith("@title") for leak in result.leaks for part in leak.attributed_by.split("+"))


def test_cli_exits_1_on_unattributable_output_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = ["audit-tenants", "--corpus", CORPUS, "--no-progress", "--probes-per-tenant", "4", "--budget", "0",
            "--concurrency-levels", "8", "--top-k-values", "5"]  # fmt: skip
    out = tmp_path / "audit.json"
    code = main([*base, "--retriever", "ragaudit.security.leaky:demo_opaque_output", "--out", str(out)])
    printed = capsys.readouterr().out
    assert code == 1 and "verdict: NOT VERIFIED" in printed and "tenant isolation: NOT VERIFIED" in printed
    code = main([*base, "--retriever", "ragaudit.security.leaky:demo_opaque_output", "--allow-unattributed"])
    assert code == 1 and "NOT VERIFIED" in capsys.readouterr().out
    report = json.loads(out.read_text(encoding="utf-8"))
    view = build_view(report, report_path=str(out))
    markdown, html = render_markdown(view), render_html(view)
    body = re.sub(r"<script.*?</script>", "", html, flags=re.S)  # the page's script draws other tables
    for text in (markdown, body):
        assert "NOT VERIFIED" in text and "✅" not in text and "✓" not in text
    assert "**⚠️ tenant isolation: NOT VERIFIED**: none of the" in markdown
    assert AUDIT_KIND.from_json(report).isolation.state == "not_verified"


def test_the_gate_does_not_take_a_not_verified_audit_as_verified(
    chunks: list[Chunk], ownership: OwnershipIndex, few: list[Probe]
) -> None:
    # the audits and the reports name the system they ran: the gate ties an audit to a report only so
    system = {"retriever": "tests:the-service"}
    opaque = {
        **audit(make_leaky("opaque-output", chunks), ownership, few, **ONE_PASS).to_dict(),
        "source": system,
    }
    clean = {
        **audit(BM25Retriever.from_chunks(chunks), ownership, few, **ONE_PASS).to_dict(),
        "source": system,
    }
    eval_report = LoadedReport(
        "eval", "eval.json", {"kind": "eval", "security": {"leaks": 0}, "source": system}
    )
    # one pass over a few probes: the audit-size floor (tests/test_gate_audit_size.py) is lowered, said so
    strict, lenient = (
        GatePolicy(min_audit_requests=0, min_probes_per_tenant=0),
        GatePolicy(allow_unverified=True, min_audit_requests=0, min_probes_per_tenant=0),
    )
    blocked = security_gate(eval_report, strict, [("opaque.json", opaque)])
    assert blocked.status == "not_verified" and not blocked.accepted
    assert any("does not verify isolation" in n and "none of the" in n for n in blocked.notes)
    assert security_gate(eval_report, lenient, [("opaque.json", opaque)]).accepted
    assert security_gate(eval_report, strict, [("clean.json", clean)]).status == "pass"
    assert "**✅ tenant isolation: pass**: no foreign chunk served" in render_markdown(build_view(clean))
    verified = {
        "check": "tenant isolation",
        "state": "pass",
        "reason": "eval checked its chunks",
        "verified": 5,
        "total": 5,
    }
    eval_verified = LoadedReport(
        "eval",
        "eval.json",
        {"kind": "eval", "security": {"leaks": 0, "isolation": verified}, "source": system},
    )
    # an eval (even an older report that called its own-tenant check a pass) verifies no isolation
    assert security_gate(eval_verified, strict, []).status == "not_verified"
    assert security_gate(eval_verified, strict, [("clean.json", clean)]).status == "pass"
    assert security_gate(eval_verified, strict, [("opaque.json", opaque)]).status == "not_verified"
    older = {**opaque, "verdict": "clean", "passed": True}  # written before the audit judged attribution
    older.pop("isolation")
    assert security_gate(eval_report, strict, [("older.json", older)]).status == "not_verified"


# ------------------------------------------------------------------------------------ the proofs


def test_every_leak_style_is_caught_by_the_proofs() -> None:
    """The figure docs/security.md states: how many leaky retrievers the proofs catch, by family."""
    assert set(OUTPUT_LEAKS) <= set(LEAKY) and len(OUTPUT_LEAKS) == 8
    assert (
        len(LEAKY) == 37
    )  # 21 + the 10 response leaks (tests/test_response_attribution.py) + foreign-summaries (tests/test_verified_earned.py: caught with --attribute semantic) + the 5 context leaks (tests/test_red_team_services.py)


def test_eval_checks_every_field_and_template_variants_too(ownership: OwnershipIndex, templated: Any) -> None:
    """``ragaudit eval --corpus`` checks each returned chunk with the same attribution (runner.tenancy)."""
    from ragaudit.runner.tenancy import check_chunks

    own, other = ownership.documents["acme-faq-billing"], ownership.documents["globex-faq-billing"]
    items = to_ranked_items(
        [
            {"chunk_id": own.doc_id, "content": own.text, "tenant_id": "acme"},
            {"chunk_id": own.doc_id, "content": own.text, "tenant_id": "acme", "snippet": other.text[:300]},
        ]
    )
    found = check_chunks(items, "acme", ownership)
    assert [(leak.rank, leak.claimed_tenant) for leak in found.leaks] == [(2, "globex")]
    stemmed = analysed(other.text)
    opaque = RankedItem("vec-9", content=stemmed, tenant_id="acme")  # labelled the caller's: not vouched for
    secret_title = ownership.documents["globex-contract-umbrella-partnership"].title
    titled = RankedItem("vec-9", content=stemmed, tenant_id="acme", extra={"title": secret_title})
    found = check_chunks([opaque, titled], "acme", ownership)
    assert found.unverified == {("vec-9", 1)} and [leak.rank for leak in found.leaks] == [2]
    index = templated[2]
    variant = RankedItem("tenant3-msa", content=index.documents["tenant1-msa"].text, tenant_id="tenant3")
    assert [leak.claimed_tenant for leak in check_chunks([variant], "tenant3", index).leaks] == ["tenant1"]


def test_the_whole_request_plan_is_identical_across_hash_seeds() -> None:
    """Not only the probes: every request of a round (text, caller, top_k, part; hostile ids included)
    is the same, in the same order, in processes with different PYTHONHASHSEED."""
    script = (
        "import hashlib, json, sys\n"
        "from ragaudit.corpus.loading import load_corpus\n"
        "from ragaudit.security.canaries import load_canaries\n"
        "from ragaudit.security.probes import generate_probes\n"
        "from ragaudit.security.request_plan import plan_round\n"
        "c = load_corpus(sys.argv[1] + '/corpus.jsonl')\n"
        "p = generate_probes(c.documents, canaries=load_canaries(sys.argv[1] + '/canaries.jsonl', c.documents))\n"
        "plan = [r for n in (0, 1) for r in plan_round(p, c.tenants, (1, 10, 50), 10, n)]\n"
        "rows = [[r.probe.text, repr(r.caller), r.top_k, r.part, r.round] for r in plan]\n"
        "print(len(rows), hashlib.sha256(json.dumps(rows).encode()).hexdigest())\n"
    )
    outputs = set()
    for seed in ("0", "7", "4242"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": os.pathsep.join(sys.path)}
        done = subprocess.run(
            [sys.executable, "-c", script, str(KB)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
        outputs.add(done.stdout.strip())
    assert len(outputs) == 1 and int(next(iter(outputs)).split()[0]) > 2000, outputs


@dataclasses.dataclass(frozen=True, slots=True)
class _Hit:
    chunk_id: str
    score: float
    content: str
    title: str


class _Plain:
    def __init__(self, chunk_id: str, content: str, snippet: str) -> None:
        self.chunk_id, self.content, self.snippet = chunk_id, content, snippet


def test_python_retrievers_returning_objects_have_every_attribute_inspected(
    ownership: OwnershipIndex,
) -> None:
    own = ownership.documents["acme-faq-billing"]
    other = ownership.documents["globex-contract-umbrella-partnership"]
    slotted, plain = to_ranked_items(
        [_Hit(own.doc_id, 1.0, own.text, other.title), _Plain(own.doc_id, own.text, other.text[:400])]
    )
    assert slotted.extra == {"title": other.title} and plain.extra == {"snippet": other.text[:400]}
    for item in (slotted, plain):
        assert ownership.attribute_item(item).foreign_owners("acme") == {"globex"}


def test_a_nested_search_engine_response_is_inspected_beyond_the_mapped_fields(
    chunks: list[Chunk], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An Elasticsearch-like body: ids and text mapped with --field, the rest (``_source`` siblings, a
    nested ``highlight``) kept as extra fields; a foreign highlight in it is caught."""
    bm25 = BM25Retriever.from_chunks(chunks)
    field_leak: Any = make_leaky("field-highlight", chunks)

    def handle(request: Request) -> Reply:
        body = request.json()
        own = bm25.search_many(body["tenant_id"], [body["query"]], body["top_k"])[0]
        leaked = field_leak.answer(body["tenant_id"], body["query"], body["top_k"])
        hits = [
            {
                "_id": h["chunk_id"],
                "_score": h["score"],
                "_source": {"text": h["content"], "owner": h["tenant_id"], "lang": "en"},
                "highlight": {"text": x["highlight"]},
            }
            for h, x in zip(own, leaked, strict=False)
        ]
        return Reply(body={"hits": {"hits": hits}})

    with LocalServer(handle) as server:
        mapped = ["--field", "chunk_id=_id", "--field", "score=_score", "--field", "content=_source.text",
                  "--field", "tenant_id=_source.owner", "--results-field", "hits.hits"]  # fmt: skip
        code, report = _audit_endpoint(server.url, tmp_path / "audit.json", *mapped)
    assert code == 1 and report["verdict"] == "leak", report["isolation"]
    fields = {f["field"] for r in report["leaks"]["records"] for f in r["fields"]}
    assert fields and all(f.startswith("highlight.text[") for f in fields)
    capsys.readouterr()


def test_an_index_of_ids_alone_checks_chunks_by_id(kb: Corpus, chunks: list[Chunk]) -> None:
    """`eval --pipeline` builds the index from ids alone (no text indexed): its chunks are checked by id,
    never reported as text found in no document."""
    from ragaudit.runner.tenancy import check_chunks

    ids_only = OwnershipIndex({d.doc_id: d for d in kb.documents}, {c.chunk_id: c.doc_id for c in chunks})
    mine = RankedItem(chunks[0].chunk_id, content=chunks[0].text, tenant_id=chunks[0].tenant_id)
    assert ids_only.attribute_item(mine).attributed
    found = check_chunks([mine], chunks[0].tenant_id, ids_only)
    assert not found.unverified and not found.leaks
