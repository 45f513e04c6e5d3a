"""Tenant-isolation audit: ownership from the corpus, probes, the audit itself, leaky retrievers caught,
built-in pipelines clean on the demo knowledge base and on a generated 20-tenant corpus, the CLI."""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from conftest import KB
from ragaudit.cli.main import main
from ragaudit.corpus.chunkers import chunk_corpus, make_chunker
from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.corpus.model import Chunk, Document
from ragaudit.errors import TenantError, ValidationError
from ragaudit.pipelines.build import ComponentCache, build_pipeline
from ragaudit.pipelines.config import parse_pipeline, preset
from ragaudit.retrieval.bm25 import BM25Retriever
from ragaudit.retrieval.fusion_features import FEATURES
from ragaudit.retrieval.learned_fusion import FusionModel
from ragaudit.retrieval.protocol import RetrievedChunk
from ragaudit.security.canaries import Canary, load_canaries
from ragaudit.security.leaky import (
    CONDITIONAL,
    CONTEXT_LEAKS,
    DEFAULT_SYNONYMS,
    LEAKY,
    RESPONSE_LEAKS,
    REWRITTEN_LEAKS,
    RelabelingRetriever,
    make_leaky,
)
from ragaudit.security.ownership import OwnershipIndex
from ragaudit.security.probes import PROBE_KINDS, Probe, generate_probes
from ragaudit.security.tenant_audit import (
    AuditOptions,
    TenantAudit,
    audit_tenants,
    plan_matrix,
    tenant_variants,
)
from ragaudit.text.words import contains_phrase

QUIET = AuditOptions(progress=False)
ONE_PASS: dict[str, Any] = {"top_k_values": (10,), "concurrency_levels": (8,), "rounds": 1}
"""One round at one top_k and concurrency: enough for leaks that do not depend on them, and fast."""


# ------------------------------------------------------------------------------------ fixtures


@pytest.fixture(scope="module")
def kb() -> Corpus:
    return load_corpus(KB / "corpus.jsonl")


@pytest.fixture(scope="module")
def canaries(kb: Corpus) -> tuple[Canary, ...]:
    return load_canaries(KB / "canaries.jsonl", kb.documents)


@pytest.fixture(scope="module")
def chunks(kb: Corpus) -> list[Chunk]:
    return chunk_corpus(kb, make_chunker("whole"))


@pytest.fixture(scope="module")
def ownership(kb: Corpus, chunks: list[Chunk], canaries: tuple[Canary, ...]) -> OwnershipIndex:
    return OwnershipIndex.build(kb.documents, chunks, canaries)


@pytest.fixture(scope="module")
def probes(kb: Corpus, canaries: tuple[Canary, ...]) -> list[Probe]:
    return generate_probes(kb.documents, canaries=canaries)


@pytest.fixture(scope="module")
def shared() -> ComponentCache:
    return ComponentCache()


def audit(retriever: Any, ownership: OwnershipIndex, probes: list[Probe], **options: Any) -> TenantAudit:
    return asyncio.run(audit_tenants(retriever, ownership, probes, AuditOptions(progress=False, **options)))


SYLLABLES = ["ka", "lo", "mi", "ne", "ru", "sa", "ti", "vo", "ze", "da", "fe", "gu", "ha", "jo", "ki"]
WORDS = [
    "invoice",
    "refund",
    "warranty",
    "sensor",
    "gateway",
    "ledger",
    "contract",
    "renewal",
    "discount",
    "onboarding",
    "dashboard",
    "export",
    "retention",
    "backup",
    "region",
    "audit",
    "payroll",
    "kiosk",
    "ticket",
    "agent",
    "escalation",
    "uptime",
    "credit",
    "tier",
]


def _name(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(3)).capitalize()


def generate_corpus(
    path: Path, tenants: int = 20, docs_per_tenant: int = 4, seed: int = 7
) -> tuple[Path, Path]:
    """A multi-tenant corpus: tenants t1..tN (t1 is a prefix of t10..t19), similar topics with
    different facts, one shared boilerplate sentence, one confidential contract and canary each,
    and one superseded version per tenant. Returns the corpus and canary paths."""
    rng = random.Random(seed)
    docs: list[dict[str, Any]] = []
    secrets: list[dict[str, str]] = []
    for t in range(1, tenants + 1):
        tenant = f"t{t}"
        company, product, person = _name(rng), _name(rng), f"{_name(rng)} {_name(rng)}"
        for d in range(docs_per_tenant):
            topic = rng.sample(WORDS, 4)
            text = (
                f"{company} {product} {topic[0]} policy: the {topic[1]} limit is {rng.randint(2, 900)} "
                f"per {topic[2]}, reviewed by {person}. Contact support for help with your account. "
                f"{product} {topic[3]} rules changed in {rng.randint(2019, 2025)}."
            )
            metadata: dict[str, Any] = {"status": "active", "source_id": f"{tenant}-doc{d}"}
            if d == 0:
                metadata.update(version=2)
                old = dict(metadata, status="superseded", version=1, superseded_by=f"{tenant}-doc{d}-v2")
                docs.append(
                    {
                        "doc_id": f"{tenant}-doc{d}-v1",
                        "tenant_id": tenant,
                        "title": f"{product} {topic[0]} (old)",
                        "text": text.replace("limit is", "limit was"),
                        "metadata": old,
                    }
                )
                docs.append(
                    {
                        "doc_id": f"{tenant}-doc{d}-v2",
                        "tenant_id": tenant,
                        "title": f"{product} {topic[0]}",
                        "text": text,
                        "metadata": metadata,
                    }
                )
            else:
                docs.append(
                    {
                        "doc_id": f"{tenant}-doc{d}",
                        "tenant_id": tenant,
                        "title": f"{product} {topic[0]}",
                        "text": text,
                        "metadata": metadata,
                    }
                )
        secret = f"deal code {company.upper()}-{rng.randint(1000, 9999)}"
        docs.append(
            {
                "doc_id": f"{tenant}-contract",
                "tenant_id": tenant,
                "title": f"Confidential severance agreement: {person}",
                "text": f"CONFIDENTIAL. {person} receives severance of {rng.randint(3, 24)} months, recorded as {secret}.",
                "metadata": {"status": "active", "confidential": True},
            }
        )
        secrets.append({"tenant_id": tenant, "doc_id": f"{tenant}-contract", "secret": secret})
    corpus_path, canary_path = path / "corpus.jsonl", path / "canaries.jsonl"
    corpus_path.write_text("".join(json.dumps(d) + "\n" for d in docs), encoding="utf-8")
    canary_path.write_text("".join(json.dumps(s) + "\n" for s in secrets), encoding="utf-8")
    return corpus_path, canary_path


@pytest.fixture(scope="module")
def twenty(tmp_path_factory: pytest.TempPathFactory) -> tuple[Corpus, tuple[Canary, ...], Path, Path]:
    corpus_path, canary_path = generate_corpus(tmp_path_factory.mktemp("twenty"))
    corpus = load_corpus(corpus_path)
    return corpus, load_canaries(canary_path, corpus.documents), corpus_path, canary_path


# ------------------------------------------------------------------------------------ ownership


def test_ownership_by_id_chunk_id_and_content(kb: Corpus, ownership: OwnershipIndex) -> None:
    doc = kb.by_id["globex-contract-umbrella-partnership"]
    assert ownership.attribute(doc.doc_id).id_owner == "globex"
    assert ownership.attribute(f"{doc.doc_id}#3").id_owner == "globex"  # a chunker's id
    by_content = ownership.attribute("opaque-123", doc.text[100:400])
    assert by_content.id_owner is None and by_content.content_owners == {"globex"}
    assert by_content.is_leak("acme") and not by_content.is_leak("globex")
    # foreign text under one of the caller's own ids is still foreign
    disguised = ownership.attribute("acme-faq-billing", doc.text)
    assert disguised.foreign_owners("acme") == {"globex"} and disguised.method == "id+content+canary"
    # a few words (shorter than a shingle) must appear verbatim
    assert ownership.attribute("x", "BLUE LANTERN").content_owners == {"globex"}
    nothing = ownership.attribute("made-up", "text no tenant ever wrote down anywhere at all")
    assert not nothing.attributed and not nothing.is_leak("acme")


def test_text_shared_by_tenants_is_not_a_leak_for_either_but_a_template_is_no_excuse() -> None:
    boilerplate = "Contact support for help with your account at any time of the day or night."
    index = OwnershipIndex.build(
        [
            Document("a1", "a", f"{boilerplate} The Alpha plan costs 5 dollars per seat and month."),
            Document("b1", "b", f"{boilerplate} The Beta plan costs 9 dollars per seat and month."),
        ]
    )
    shared = index.attribute("unknown", boilerplate)
    assert shared.content_owners == {"a", "b"} and not shared.is_leak("a") and not shared.is_leak("b")
    assert shared.is_leak("c")
    # b's whole document shares a template with a's, but it is b's: served to a, it is a leak
    templated = index.attribute("unknown", index.documents["b1"].text)
    assert templated.content_owners == {"b"} and templated.is_leak("a")


def test_every_chunk_of_the_kb_is_attributed_to_its_own_tenant(kb: Corpus) -> None:
    pieces = chunk_corpus(kb, make_chunker("recursive", 48, 8))
    index = OwnershipIndex.build(kb.documents)
    for chunk in pieces:
        who = index.attribute("hidden-id", chunk.text)
        assert chunk.tenant_id in who.content_owners, chunk.chunk_id
        assert not who.is_leak(chunk.tenant_id)


def test_canary_names_its_tenant_whatever_else_the_text_says(ownership: OwnershipIndex) -> None:
    who = ownership.attribute("acme-faq-billing", "as agreed, see price-protection RIDER ac-7731 for details")
    assert who.id_owner == "acme" and [c.tenant_id for c in who.canaries] == ["acme"]
    assert not who.is_leak("acme") and who.is_leak("globex")


def test_canary_file_is_checked_against_the_corpus(tmp_path: Path, kb: Corpus) -> None:
    path = tmp_path / "canaries.jsonl"
    path.write_text(
        '{"tenant_id": "acme", "doc_id": "globex-faq-api", "secret": "x"}\n'
        '{"tenant_id": "acme", "secret": "Professional plan"}\n'
        '{"tenant_id": "acme"}\n'
        "not json\n",
        encoding="utf-8",
    )
    with pytest.raises(ValidationError) as info:
        load_canaries(path, kb.documents)
    assert [(p.line, p.message.split(" ")[0]) for p in info.value.problems] == [
        (1, "doc"),
        (2, "the"),
        (3, "missing"),
        (4, "malformed"),
    ]
    assert all(p.fix for p in info.value.problems)


# ------------------------------------------------------------------------------------ probes


def test_probes_come_from_each_tenants_own_documents(kb: Corpus, probes: list[Probe]) -> None:
    assert probes == generate_probes(kb.documents, canaries=load_canaries(KB / "canaries.jsonl"))
    by_tenant = Counter(p.tenant_id for p in probes)
    assert by_tenant == {"acme": 24, "globex": 24, "initech": 24, None: 5}
    for tenant in kb.tenants:
        kinds = {p.kind for p in probes if p.tenant_id == tenant}
        assert kinds == set(PROBE_KINDS) - {"generic"}, tenant
    for probe in probes:
        if probe.tenant_id is None:
            continue
        doc = kb.by_id[probe.doc_id or ""]
        assert doc.tenant_id == probe.tenant_id
        assert contains_phrase(f"{doc.title}\n{doc.text}", probe.text), probe
    assert {p.text for p in probes if p.kind == "canary"} == {
        c.secret for c in load_canaries(KB / "canaries.jsonl")
    }
    assert len({p.id for p in probes}) == len(probes)


def test_rare_entities_belong_to_one_tenant(kb: Corpus, probes: list[Probe]) -> None:
    entities = [p for p in probes if p.kind == "entity"]
    assert "Northwind Logistics" in {p.text for p in entities}
    for probe in entities:
        owners = {d.tenant_id for d in kb.documents if contains_phrase(f"{d.title} {d.text}", probe.text)}
        assert owners == {probe.tenant_id}, probe


def test_matrix_and_hostile_plans() -> None:
    probes = [Probe(f"a/{i}", "title", f"q{i}", "a") for i in range(4)] + [Probe("g", "generic", "g", None)]
    tenants = ["a", "b", "c", "d"]
    full = plan_matrix(probes, tenants)
    assert len(full) == 4 * 3 + 4
    sampled = plan_matrix(probes, tenants, callers_per_probe=1)
    assert Counter(c for p, c in sampled if p.tenant_id == "a") == {"b": 2, "c": 1, "d": 1}
    assert len(plan_matrix(probes, tenants, callers_per_probe=5)) == len(full)
    many = [f"t{i}" for i in range(7)]
    two_each = [Probe(f"{t}/{n}", "title", f"{t} {n}", t) for t in many for n in range(3)]
    pairs = {(p.tenant_id, c) for p, c in plan_matrix(two_each, many, callers_per_probe=2)}
    assert len(pairs) == 7 * 6  # 2 callers x 3 probes >= 6 other tenants: every pair is asked
    variants = dict(tenant_variants("t1", ["t1", "T1", "t10"]))
    assert "T1" not in variants and "t1" not in variants and "t1 " in variants and "t" in variants
    assert all(v.strip() for v in variants)


# ------------------------------------------------------------------------------------ the audit


@pytest.mark.parametrize("name", ["bm25", pytest.param("dense", marks=pytest.mark.slow), "hybrid"])
def test_builtin_pipelines_are_clean_on_the_demo_kb(
    name: str, kb: Corpus, canaries: tuple[Canary, ...], probes: list[Probe], shared: ComponentCache
) -> None:
    built = build_pipeline(preset(name), kb, cache=shared)
    index = OwnershipIndex.build(kb.documents, built.chunks, canaries)
    result = audit(built.retriever, index, probes, **(ONE_PASS if name != "bm25" else {}))
    assert result.verdict() == "clean", [leak.to_json() for leak in result.leaks[:3]]
    per_round = 3 * 24 * 3 + 5 * 3  # every tenant probe by its owner and both others, generic ones by all
    rounds, top_ks = (1, 1) if name != "bm25" else (3, 3)
    assert result.errors.total == per_round * rounds * top_ks and result.errors.failed == 0
    assert result.checked_chunks > 500 and result.unattributed_count == 0 and result.label_mismatches == 0
    outcomes = Counter(h.outcome for h in result.hostile)
    assert outcomes["served"] == 0 and outcomes["refused"] == 3 * 2 * 3 * rounds  # None, "" and " " refused


@pytest.mark.slow
def test_hybrid_rerank_and_chunked_pipelines_are_clean(
    kb: Corpus, canaries: tuple[Canary, ...], shared: ComponentCache, tmp_path: Path
) -> None:
    model = tmp_path / "fusion.json"  # a learned-fusion model that favours dense rank and title overlap
    weights = [0.0] * len(FEATURES)
    weights[FEATURES.index("dense_log_rank")], weights[FEATURES.index("title_overlap")] = -1.0, 1.0
    FusionModel(tuple(weights), (0.0,) * len(FEATURES), (1.0,) * len(FEATURES)).write(model)
    few = generate_probes(kb.documents, canaries=canaries, per_tenant=4, generic=["severance clauses"])
    chunked = parse_pipeline(
        {
            "name": "bm25-chunks",
            "chunking": {"strategy": "recursive", "size": 48},
            "retriever": {"type": "bm25"},
        }
    )
    for config in (preset(f"hybrid-rerank:{model}"), chunked):
        built = build_pipeline(config, kb, cache=shared)
        index = OwnershipIndex.build(kb.documents, built.chunks, canaries)
        result = audit(built.retriever, index, few, hostile_probes=1, **ONE_PASS)
        assert result.verdict() == "clean" and result.checked_chunks > 0, config.name


def test_builtin_retrievers_refuse_unusable_tenants(chunks: list[Chunk]) -> None:
    bm25 = BM25Retriever.from_chunks(chunks)
    for bad in (None, "", "  ", 7):
        with pytest.raises(TenantError):
            asyncio.run(bm25.search(tenant_id=bad, query="severance", top_k=5))  # type: ignore[arg-type]
    for near in ("ACME", "Acme", " acme", "acme ", "acm", "acme_", "*", "%"):
        assert asyncio.run(bm25.search(tenant_id=near, query="severance", top_k=5)) == [], near


@pytest.mark.parametrize(
    "kind",
    [
        kind
        for kind in LEAKY
        if kind not in CONDITIONAL
        and kind not in ("templated-variant", "opaque-output", *REWRITTEN_LEAKS)  # the latter: semantic
        and kind not in RESPONSE_LEAKS  # tests/test_response_attribution.py
        and kind not in CONTEXT_LEAKS  # tests/test_red_team_services.py
    ],
)
def test_every_leaky_retriever_is_caught(
    kind: str, chunks: list[Chunk], ownership: OwnershipIndex, probes: list[Probe]
) -> None:
    """The unconditional leakers (the conditional ones: tests/test_tenant_audit_asking.py)."""
    result = audit(make_leaky(kind, chunks), ownership, probes, **ONE_PASS)
    assert result.verdict() == "leak"
    report = result.to_dict()
    assert report["passed"] is False and report["leaks"]["count"] == len(result.leaks) > 0
    cross = [leak for leak in result.leaks if not leak.hostile]
    hostile = [leak for leak in result.leaks if leak.hostile]
    for leak in result.leaks:  # the evidence is all there
        assert leak.owners and leak.caller not in leak.owners and leak.probe.text and leak.rank >= 1
        assert leak.attributed_by != "none"
    if kind == "rewrite-path":  # only the rewritten queries leak
        assert cross and all(any(k in leak.probe.text.lower() for k in DEFAULT_SYNONYMS) for leak in cross)
    if kind in ("prefix-tenant", "case-insensitive-tenant"):  # no tenant of the KB is another's prefix
        assert not cross and hostile
        callers = {leak.caller for leak in hostile}
        assert ("acm" in callers) if kind == "prefix-tenant" else ({"ACME", " acme"} <= callers)
    else:
        assert cross
    if kind == "relabeling":  # every chunk claims the caller's tenant and has an opaque id
        assert report["leaks"]["caught_by_labels_alone"] == 0 and result.label_mismatches > 0
        assert all("content" in leak.attributed_by for leak in result.leaks)


def test_a_label_trusting_check_misses_the_relabeling_service(chunks: list[Chunk]) -> None:
    """The runner's own check compares labels; the audit compares content with the corpus."""
    from ragaudit.data.schema import GoldenCase
    from ragaudit.runner.execute import run_cases

    relabeling = RelabelingRetriever(make_leaky("post-filter-backfill", chunks), hide_ids=True)
    cases = [GoldenCase("c", "What are the confidential severance clauses?", (), tenant_id="acme")]
    run = asyncio.run(run_cases(relabeling, cases, 10, progress=False))
    assert run.cases["c"].leaks == []  # labels say "acme" everywhere
    owners = {d.tenant_id for d in load_corpus(KB / "corpus.jsonl").documents}
    index = OwnershipIndex.build(load_corpus(KB / "corpus.jsonl").documents)
    found = {o for item in run.cases["c"].items for o in index.attribute(item.chunk_id, item.content).owners}
    assert found - {"acme"} and found <= owners


def test_failing_requests_make_the_audit_incomplete(ownership: OwnershipIndex, probes: list[Probe]) -> None:
    class Broken:
        async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
            raise ConnectionRefusedError("index offline")

    from ragaudit.retry import RetryPolicy
    from ragaudit.security.request_mutations import MutationOptions

    no_mutations = MutationOptions(per_tenant=0)  # they go first, and the stop would come with them
    result = audit(
        Broken(), ownership, probes[:3], retry=RetryPolicy(2, 0.001, 0.001), hostile_probes=0,
        mutations=no_mutations, **ONE_PASS,
    )  # fmt: skip
    # the three planned requests were all sent (the stop came with the last); tolerating every
    # failure still verifies nothing: no chunk was returned, so it is never clean
    assert result.verdict() == "incomplete" and result.verdict(max_error_rate=1.0) == "not-verified"
    assert result.stopped is None
    assert result.errors.by_kind == {"connection": result.errors.total}


def test_a_service_that_answers_nothing_is_not_verified_even_when_failures_are_tolerated(
    ownership: OwnershipIndex, probes: list[Probe]
) -> None:
    class Refusing:  # reachable (it answers), but refuses every request
        async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
            raise PermissionError("refused")

    from ragaudit.retry import RetryPolicy

    result = audit(
        Refusing(), ownership, probes[:3], retry=RetryPolicy(2, 0.001, 0.001), hostile_probes=0, **ONE_PASS
    )
    assert result.stopped is None and result.errors.failed == result.errors.total > 0
    assert result.verdict() == "incomplete" and result.verdict(max_error_rate=1.0) == "not-verified"


# ------------------------------------------------------------------------------------ 20 tenants


def test_generated_twenty_tenant_corpus_bm25_clean_and_prefix_leak_caught(twenty: Any) -> None:
    corpus, secrets, _, _ = twenty
    assert len(corpus.tenants) == 20 and sum(d.status == "superseded" for d in corpus.documents) == 20
    pieces = chunk_corpus(corpus, make_chunker("whole"))
    index = OwnershipIndex.build(corpus.documents, pieces, secrets)
    probes = generate_probes(corpus.documents, canaries=secrets, per_tenant=8)
    clean = audit(BM25Retriever.from_chunks(pieces), index, probes, **ONE_PASS)
    assert clean.verdict() == "clean" and clean.errors.total == 20 * 8 * 20 + 5 * 20
    prefix = audit(make_leaky("prefix-tenant", pieces), index, probes, hostile_probes=0, **ONE_PASS)
    pairs = {(o, leak.caller) for leak in prefix.leaks for o in leak.owners}
    assert {("t10", "t1"), ("t19", "t1"), ("t20", "t2")} <= pairs
    assert all(caller and owner.startswith(caller) and owner != caller for owner, caller in pairs)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["dense", "hybrid"])
def test_generated_twenty_tenant_corpus_dense_pipelines_clean(
    name: str, twenty: Any, shared: ComponentCache
) -> None:
    corpus, secrets, _, _ = twenty
    built = build_pipeline(preset(name), corpus, cache=shared)
    index = OwnershipIndex.build(corpus.documents, built.chunks, secrets)
    probes = generate_probes(corpus.documents, canaries=secrets, per_tenant=3)
    result = audit(built.retriever, index, probes, callers_per_probe=4, hostile_probes=1, **ONE_PASS)
    assert result.verdict() == "clean", [leak.to_json() for leak in result.leaks[:3]]
    plan = plan_matrix(probes, corpus.tenants, 4)
    assert len(plan) == 20 * 3 * 4 + 5 * 20 and result.errors.failed == 0
    assert result.errors.total == len(plan) + 20 * 3  # and each probe by its owner
    assert {caller for probe, caller in plan if probe.tenant_id} == set(corpus.tenants)


# ------------------------------------------------------------------------------------ CLI


def test_cli_clean_exit_0_and_report(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "audit.json"
    code = main(
        [
            "audit-tenants",
            "--corpus", str(KB / "corpus.jsonl"),
            "--pipeline", "bm25",
            "--canaries", str(KB / "canaries.jsonl"),
            "--out", str(out),
            "--no-progress",
        ]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 0 and "verdict: clean" in printed
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["kind"] == "tenant-audit" and report["verdict"] == "clean" and report["passed"] is True
    assert report["leaks"]["count"] == 0 and report["canaries"]["count"] == 9
    assert report["source"]["label"] == "bm25" and report["source"]["pipeline"]["name"] == "bm25"
    assert report["hostile_tenants"]["served"] == 0 and report["requests"]["hostile_tenant"] > 0


def test_cli_leak_exit_1_with_evidence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "audit.json"
    code = main(
        [
            "audit-tenants",
            "--corpus", str(KB / "corpus.jsonl"),
            "--retriever", "ragaudit.security.leaky:demo_relabeling",
            "--out", str(out),
            "--probes-per-tenant", "4",
            "--top-k-values", "10", "--concurrency-levels", "8", "--budget", "0",
            "--no-progress",
        ]
    )  # fmt: skip
    printed = capsys.readouterr().out
    assert code == 1 and "verdict: LEAK" in printed
    record = json.loads(out.read_text(encoding="utf-8"))["leaks"]["records"][0]
    assert set(record) >= {"probe", "caller", "chunk_id", "rank", "owner", "attributed_by", "excerpt"}
    assert record["claimed_tenant"] == record["caller"] and record["caller"] not in record["owner"]


def test_cli_bad_input_exits_2_with_file_and_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "canaries.jsonl"
    bad.write_text('{"tenant_id": "acme", "secret": "no such phrase anywhere"}\n', encoding="utf-8")
    code = main(
        ["audit-tenants", "--corpus", str(KB / "corpus.jsonl"), "--pipeline", "bm25", "--canaries", str(bad)]
    )
    err = capsys.readouterr().err
    assert code == 2 and f"{bad}:1: the secret occurs in no document of 'acme'" in err
    code = main(["audit-tenants", "--corpus", str(KB / "corpus.jsonl"), "--pipeline", "bm25", "--top-k", "0"])
    assert code == 2 and "--top-k" in capsys.readouterr().err


def test_cli_catches_a_relabeling_http_service(chunks: list[Chunk], tmp_path: Path) -> None:
    """A live service that serves every tenant's chunks, labelled as the caller's under opaque ids."""
    import hashlib
    import sys
    from dataclasses import replace

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from servers import LocalServer, Reply, Request

    pooled = BM25Retriever.from_chunks([replace(c, tenant_id="pool") for c in chunks])

    def handle(request: Request) -> Reply:
        body = request.json()
        if not isinstance(body.get("tenant_id"), str) or not body["tenant_id"].strip():
            return Reply(status=400, body={"detail": "tenant_id required"})
        hits = pooled.search_many("pool", [body["query"]], body["top_k"])[0]
        return Reply(
            body=[
                {
                    "id": "hit-" + hashlib.sha256(h["content"].encode()).hexdigest()[:10],
                    "score": h["score"],
                    "text": h["content"],
                    "tenant": body["tenant_id"],
                }
                for h in hits
            ]
        )

    out = tmp_path / "audit.json"
    with LocalServer(handle) as server:
        code = main(
            [
                "audit-tenants",
                "--corpus", str(KB / "corpus.jsonl"),
                "--endpoint", server.url,
                "--field", "chunk_id=id", "--field", "content=text", "--field", "tenant_id=tenant",
                "--probes-per-tenant", "5",
                "--top-k-values", "10", "--concurrency-levels", "8", "--budget", "0",
                "--out", str(out),
                "--no-progress",
            ]
        )  # fmt: skip
    report = json.loads(out.read_text(encoding="utf-8"))
    assert code == 1 and report["verdict"] == "leak"
    assert report["leaks"]["caught_by_labels_alone"] == 0 and report["label_mismatches"] > 0
    assert {r["attributed_by"].split("+")[0] for r in report["leaks"]["records"]} == {"content"}
    assert report["hostile_tenants"]["refused"] > 0  # null / empty tenant ids were refused (HTTP 400)
    assert report["source"]["endpoint"] == server.url
