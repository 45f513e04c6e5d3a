"""The rewrite stage: tenant pass-through, synonym maps, RM3 from the caller's tenant only, LLM rewrites."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from openai_stub import OpenAIStub, Reply
from ragaudit.errors import InputError, TenantError
from ragaudit.llm.chat import ChatClient
from ragaudit.retrieval.protocol import RetrievedChunk, Retriever
from ragaudit.retrieval.rewrite import QueryRewriter, RewriteRetriever
from ragaudit.retrieval.rewriters import (
    LLMRewriter,
    RM3Rewriter,
    SynonymRewriter,
    clean_rewrite,
    load_synonyms,
)
from test_rerank import OverlapRetriever


class RecordingRewriter:
    """Upper-cases the query; records the tenants it was given."""

    name = "upper"

    def __init__(self, answer: str | None = None) -> None:
        self.answer = answer
        self.tenants: list[str] = []

    async def rewrite(self, query: str, *, tenant_id: str) -> str:
        self.tenants.append(tenant_id)
        return self.answer if self.answer is not None else query.upper()


def search(retriever: Retriever, tenant: Any = "acme", query: str = "refund policy", top_k: int = 3) -> Any:
    return asyncio.run(retriever.search(tenant_id=tenant, query=query, top_k=top_k))


def rewrite(rewriter: QueryRewriter, query: str, tenant: str = "acme") -> str:
    return asyncio.run(rewriter.rewrite(query, tenant_id=tenant))


ACME_AND_GLOBEX = [
    ("acme", "a1", "refund reimbursement policy for customers"),
    ("acme", "a2", "reimbursement form for travel expenses"),
    ("acme", "a3", "refund reimbursement deadline is thirty days"),
    ("acme", "a4", "office parking rules"),
    ("globex", "g1", "refund rocket propellant contract"),
    ("globex", "g2", "refund propellant shipment rocket"),
]


# ------------------------------------------------------------------------------------------ stage


def test_rewrite_searches_the_same_tenant_with_the_new_query_and_records_both() -> None:
    base = OverlapRetriever([("acme", "x", "REFUND POLICY text"), ("acme", "y", "refund policy text")])
    rewriter = RecordingRewriter()
    stage = RewriteRetriever(base, rewriter)
    assert isinstance(stage, Retriever)
    assert isinstance(rewriter, QueryRewriter)
    results = search(stage, tenant="acme", top_k=2)
    assert base.calls == [{"tenant_id": "acme", "query": "REFUND POLICY", "top_k": 2}]
    assert rewriter.tenants == ["acme"]
    assert [r["chunk_id"] for r in results] == ["x", "y"]
    assert results[0]["metadata"] == {
        "origin": "overlap",
        "original_query": "refund policy",
        "rewritten_query": "REFUND POLICY",
    }
    assert results[0]["tenant_id"] == "acme"
    assert stage.info() == {"stage": "rewrite", "rewriter": "upper"}


@pytest.mark.parametrize("tenant", [None, "", " \t", 3])
def test_a_missing_tenant_is_refused_before_anything_is_queried(tenant: Any) -> None:
    base = OverlapRetriever(ACME_AND_GLOBEX)
    rewriter = RecordingRewriter()
    with pytest.raises(TenantError):
        search(RewriteRetriever(base, rewriter), tenant=tenant)
    assert base.calls == []
    assert rewriter.tenants == []
    for direct in (SynonymRewriter({"a": "b"}), RM3Rewriter(base)):
        with pytest.raises(TenantError):
            asyncio.run(direct.rewrite("refund", tenant_id=tenant))
    assert base.calls == []


def test_an_empty_rewrite_keeps_the_original_query() -> None:
    base = OverlapRetriever(ACME_AND_GLOBEX)
    results = search(RewriteRetriever(base, RecordingRewriter(answer="  ")), query="refund")
    assert base.calls[0]["query"] == "refund"
    assert results[0]["metadata"]["rewritten_query"] == "refund"


# ------------------------------------------------------------------------------------------ synonyms


def test_synonyms_are_appended_whole_word_and_case_insensitive() -> None:
    rewriter = SynonymRewriter(
        {
            "koto": ["how much", "price"],
            "API limit": "rate limit",
            "pro": "Pro plan",
            "SSO": ["single sign-on"],
        }
    )
    assert (
        rewrite(rewriter, "Pro plan api   LIMIT koto?")
        == "Pro plan api   LIMIT koto? rate limit how much price"
    )
    assert rewrite(rewriter, "kotoba prose") == "kotoba prose"  # no partial-word matches
    assert rewrite(rewriter, "sso setup") == "sso setup single sign-on"
    assert rewrite(rewriter, "koto price") == "koto price how much"  # an expansion already present is skipped
    assert rewrite(rewriter, "nothing to expand") == "nothing to expand"
    assert rewriter.name == "synonyms(4 keys)"


def test_keys_differing_only_in_case_are_merged() -> None:
    rewriter = SynonymRewriter({"KB": "knowledge base", "kb": ["knowledge base", "help center"]})
    assert rewriter.mapping == {"kb": ("knowledge base", "help center")}


def test_synonym_maps_load_from_json_and_toml(tmp_path: Path) -> None:
    as_json = tmp_path / "syn.json"
    as_json.write_text(json.dumps({"koto": ["how much"], "tier": "plan"}), encoding="utf-8")
    as_toml = tmp_path / "syn.toml"
    as_toml.write_text('[synonyms]\nkoto = ["how much"]\n"api limit" = "rate limit"\n', encoding="utf-8")
    assert load_synonyms(as_json) == {"koto": ("how much",), "tier": ("plan",)}
    assert (
        rewrite(SynonymRewriter.from_file(as_toml), "api limit koto") == "api limit koto rate limit how much"
    )


def test_bad_synonym_files_name_the_file_line_and_fix(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{\n  "koto": ["how much",]\n}\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_synonyms(broken)
    assert caught.value.problem.line == 2
    assert str(broken) in str(caught.value)
    bad_value = tmp_path / "bad.toml"
    bad_value.write_text("koto = 3\n", encoding="utf-8")
    with pytest.raises(InputError, match="'koto' must map to a non-empty string"):
        load_synonyms(bad_value)
    bad_toml = tmp_path / "bad2.toml"
    bad_toml.write_text("koto = [\n", encoding="utf-8")
    with pytest.raises(InputError, match="invalid TOML"):
        load_synonyms(bad_toml)
    with pytest.raises(InputError, match="not found"):
        load_synonyms(tmp_path / "missing.json")
    with pytest.raises(InputError, match=r"\.json or \.toml"):
        load_synonyms(bad_value.rename(tmp_path / "syn.yaml"))
    with pytest.raises(InputError, match="is empty"):
        SynonymRewriter({" ": "x"})
    with pytest.raises(InputError, match="'koto' must map"):
        SynonymRewriter({"koto": 3})  # type: ignore[dict-item]
    assert SynonymRewriter(MappingProxyType({"kb": ("help center",)})).mapping == {"kb": ("help center",)}


# ------------------------------------------------------------------------------------------ RM3


def test_rm3_follows_the_formula_on_a_hand_computed_example() -> None:
    base = OverlapRetriever([("t", "d1", "alpha beta"), ("t", "d2", "alpha gamma gamma")])
    rm3 = RM3Rewriter(base, fb_docs=2, fb_terms=2, original_weight=0.5, max_repeats=5)
    expansion = asyncio.run(rm3.expand("alpha", tenant_id="t"))
    # both docs score 1 (one shared word): P(t|R) ∝ d1 {alpha .5, beta .5} + d2 {alpha 1/3, gamma 2/3};
    # top 2 = alpha 5/6, gamma 2/3 -> renormalised 5/9, 4/9; P' = .5*{alpha 1} + .5*{alpha 5/9, gamma 4/9}
    assert expansion.weights == pytest.approx({"alpha": 7 / 9, "gamma": 2 / 9})
    assert list(expansion.weights) == ["alpha", "gamma"]
    assert expansion.feedback_ids == ("d1", "d2")
    # alpha: 5 occurrences (1 in the query, 4 appended); gamma: round(5 * (2/9) / (7/9)) = 1
    assert expansion.text == "alpha alpha alpha alpha alpha gamma"
    assert rewrite(rm3, "alpha", tenant="t") == expansion.text


def test_rm3_uses_feedback_from_the_callers_tenant_only() -> None:
    base = OverlapRetriever(ACME_AND_GLOBEX)
    rm3 = RM3Rewriter(base, fb_docs=3, fb_terms=5)
    acme = asyncio.run(rm3.expand("refund", tenant_id="acme"))
    globex = asyncio.run(rm3.expand("refund", tenant_id="globex"))
    acme_words = {w for t, _, text in ACME_AND_GLOBEX if t == "acme" for w in text.split()}
    globex_words = {w for t, _, text in ACME_AND_GLOBEX if t == "globex" for w in text.split()}
    assert set(acme.weights) <= acme_words
    assert "reimbursement" in acme.weights
    assert not set(acme.weights) & (globex_words - acme_words)
    assert {"rocket", "propellant"} <= set(globex.weights)
    assert not set(globex.weights) & (acme_words - globex_words)
    assert [c["tenant_id"] for c in base.calls] == ["acme", "globex"]
    assert all(c["top_k"] == 3 and c["query"] == "refund" for c in base.calls)
    assert "rocket" not in acme.text


def test_rm3_ignores_foreign_feedback_a_leaky_base_returns() -> None:
    class Leaky(OverlapRetriever):
        """Ignores the tenant filter: returns every tenant's chunks (a broken base)."""

        async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
            results: list[RetrievedChunk] = []
            for tenant in ("globex", "acme"):
                results += await super().search(tenant_id=tenant, query=query, top_k=top_k)
            return results[:top_k]

    rm3 = RM3Rewriter(Leaky(ACME_AND_GLOBEX), fb_docs=4, fb_terms=10)
    expansion = asyncio.run(rm3.expand("refund", tenant_id="acme"))
    assert expansion.foreign_dropped == 2
    assert expansion.feedback_ids == ("a1", "a3")
    assert not {"rocket", "propellant", "contract", "shipment"} & set(expansion.weights)


def test_rm3_leaves_stopword_only_queries_alone() -> None:
    base = OverlapRetriever(ACME_AND_GLOBEX)
    rm3 = RM3Rewriter(base)
    assert rewrite(rm3, "what is the") == "what is the"
    assert base.calls == []
    assert rewrite(rm3, "zebra") == "zebra"  # no feedback at all: nothing to add


def test_rm3_settings_are_checked() -> None:
    base = OverlapRetriever(ACME_AND_GLOBEX)
    with pytest.raises(ValueError, match="original_weight"):
        RM3Rewriter(base, original_weight=1.5)
    with pytest.raises(ValueError, match="fb_terms"):
        RM3Rewriter(base, fb_terms=0)
    with pytest.raises(ValueError, match="positive integer"):
        RM3Rewriter(base, fb_docs=0)


def test_rm3_over_bm25_surfaces_a_chunk_the_plain_query_missed() -> None:
    pytest.importorskip("bm25s")
    pytest.importorskip("Stemmer")
    from ragaudit.corpus.model import Chunk
    from ragaudit.retrieval.bm25 import BM25Retriever

    chunks = [Chunk(cid, cid, tenant, 0, len(text), text) for tenant, cid, text in ACME_AND_GLOBEX]
    chunks.append(Chunk("g3", "g3", "globex", 0, 30, "reimbursement of rocket costs"))
    bm25 = BM25Retriever.from_chunks(chunks)
    plain = {r["chunk_id"] for r in search(bm25, query="refund", top_k=5)}
    expanded = search(
        RewriteRetriever(bm25, RM3Rewriter(bm25, fb_docs=2, fb_terms=5)), query="refund", top_k=5
    )
    ids = {r["chunk_id"] for r in expanded}
    assert "a2" not in plain
    assert "a2" in ids  # shares only "reimbursement" with the feedback documents
    assert all(r["tenant_id"] == "acme" for r in expanded)
    assert "reimbursement" in expanded[0]["metadata"]["rewritten_query"]


# ------------------------------------------------------------------------------------------ LLM


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("What is the API rate limit of the Pro plan?", "What is the API rate limit of the Pro plan?"),
        ('Rewritten query: "Pro plan API rate limit"', "Pro plan API rate limit"),
        ("**Query:** Pro plan API rate limit\n\nI expanded 'koto'.", "Pro plan API rate limit"),
        ("```\nPro plan api_limit\n```", "Pro plan api_limit"),
        ("   \n ", ""),
    ],
)
def test_clean_rewrite(answer: str, expected: str) -> None:
    assert clean_rewrite(answer) == expected


def test_llm_rewriter_against_the_local_stub() -> None:
    script: list[Reply | str] = [
        Reply(status=500),
        'Rewritten query: "What is the API rate limit of the Pro plan?"',
        "",
    ]
    base = OverlapRetriever([("acme", "c1", "the api rate limit of the pro plan is 100 per minute")])
    with OpenAIStub(script) as stub:
        client = ChatClient(stub.base_url, "rewriter-model", max_retries=1, backoff_s=0.01, timeout_s=5)
        rewriter = LLMRewriter(client)
        stage = RewriteRetriever(base, rewriter)
        results = search(stage, query="Pro plan api limit koto?", top_k=1)
        unchanged = rewrite(rewriter, "second query")
    assert base.calls[0]["query"] == "What is the API rate limit of the Pro plan?"
    assert base.calls[0]["tenant_id"] == "acme"
    assert results[0]["metadata"]["rewritten_query"] == "What is the API rate limit of the Pro plan?"
    assert results[0]["metadata"]["original_query"] == "Pro plan api limit koto?"
    assert unchanged == "second query"  # the empty answer keeps the original, with a warning
    assert len(rewriter.warnings) == 1
    assert len(stub.requests) == 3
    sent = stub.requests[1].body["messages"][0]["content"]
    assert "Query: Pro plan api limit koto?" in sent
    assert "acme" not in sent  # the tenant is never sent to the model
    assert rewriter.name == "llm:rewriter-model"


def test_llm_rewriter_prompt_needs_the_query_placeholder() -> None:
    with pytest.raises(InputError, match=r"\{query\}"):
        LLMRewriter(ChatClient("http://127.0.0.1:1/v1", "m"), prompt="Rewrite this")
