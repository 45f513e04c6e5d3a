"""Dense retrieval with the real all-MiniLM-L6-v2 over a dozen short documents in three tenants."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pytest

from ragaudit.corpus.model import Chunk
from ragaudit.data.schema import GoldenCase
from ragaudit.errors import TenantError
from ragaudit.retrieval.dense import DenseRetriever
from ragaudit.retrieval.embedder import Embedder, FloatMatrix, TextEncoder
from ragaudit.retrieval.embedding_cache import EmbeddingCache
from ragaudit.retrieval.protocol import RetrievedChunk, Retriever
from ragaudit.retrieval.vector_store import ExactVectorStore, top_k_rows
from ragaudit.runner.execute import run_cases

DOCS = {
    "acme": {
        "acme-refund": "Customers can return any product within 30 days of purchase for a full refund.",
        "acme-leave": "Full-time employees receive 25 days of paid annual leave per year.",
        "acme-parking": "The staff car park opens at 7am and visitors must register at reception.",
        "acme-password": "Reset your password every 90 days and never share it with colleagues.",
    },
    "globex": {
        "globex-rocket": "The launch vehicle's second stage burns liquid oxygen and kerosene.",
        "globex-reactor": "Coolant pumps keep the reactor core temperature below safe limits.",
        "globex-refund": "Globex offers no refunds on launch reservations once they are confirmed.",
        "globex-lunch": "The cafeteria serves vegetarian lunch options every weekday.",
    },
    "initech": {
        "initech-printer": "If the printer jams, open tray two and remove the crumpled paper.",
        "initech-tps": "Every TPS report must include the new cover sheet before submission.",
        "initech-stapler": "The red stapler must never be moved from Milton's desk.",
        "initech-wifi": "The office Wi-Fi password changes on the first Monday of each month.",
    },
}


def make_chunks() -> list[Chunk]:
    return [
        Chunk(
            doc_id,
            doc_id,
            tenant,
            0,
            len(text),
            text,
            metadata=MappingProxyType({"source_id": f"src/{doc_id}"}),
        )
        for tenant, docs in DOCS.items()
        for doc_id, text in docs.items()
    ]


class CountingEncoder:
    """The real encoder, counting its calls (a wrapper, not a stand-in)."""

    def __init__(self, inner: TextEncoder) -> None:
        self.inner = inner
        self.calls = 0

    @property
    def fingerprint(self) -> str:
        return self.inner.fingerprint

    @property
    def dim(self) -> int:
        return self.inner.dim

    def encode(self, texts: Sequence[str]) -> FloatMatrix:
        self.calls += 1
        return self.inner.encode(texts)


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


@pytest.fixture(scope="module")
def retriever(embedder: Embedder, tmp_path_factory: pytest.TempPathFactory) -> DenseRetriever:
    cache = tmp_path_factory.mktemp("cache")
    return DenseRetriever.from_chunks(make_chunks(), model=embedder, cache=cache)


def ids(results: Sequence[dict[str, object]] | Sequence[object]) -> list[str]:
    return [r["chunk_id"] for r in results]  # type: ignore[index]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("tenant", "query", "expected"),
    [
        ("acme", "how long do I have to send an item back and get my money back?", "acme-refund"),
        ("acme", "how many holiday days do workers get", "acme-leave"),
        ("globex", "what fuel does the rocket use", "globex-rocket"),
        ("initech", "paper stuck in the copier", "initech-printer"),
    ],
)
def test_paraphrase_finds_the_right_document(
    retriever: DenseRetriever, tenant: str, query: str, expected: str
) -> None:
    assert ids(retriever.search_many(tenant, [query], 3)[0])[0] == expected


@pytest.mark.slow
def test_results_follow_the_protocol(retriever: DenseRetriever) -> None:
    assert isinstance(retriever, Retriever)
    (top,) = asyncio.run(retriever.search(tenant_id="globex", query="rocket propellant", top_k=1))
    assert top["chunk_id"] == "globex-rocket"
    assert top["content"] == DOCS["globex"]["globex-rocket"]
    assert top["source_id"] == "src/globex-rocket"
    assert top["tenant_id"] == "globex"
    assert top["metadata"]["doc_id"] == "globex-rocket"
    assert isinstance(top["score"], float)
    info = retriever.info()
    assert info["chunks_indexed"] == 12
    assert info["model"]["model"] == "all-MiniLM-L6-v2"
    assert info["timings"]["embed_s"] > 0


@pytest.mark.slow
def test_a_tenant_never_sees_another_tenants_chunks(retriever: DenseRetriever) -> None:
    rows = retriever.search_many("acme", ["what fuel does the rocket use", "paper stuck in the copier"], 1000)
    for row in rows:
        assert sorted(ids(row)) == sorted(DOCS["acme"])  # all of acme's, nothing else, even at top_k=1000
        assert {r["tenant_id"] for r in row} == {"acme"}
    assert retriever.search_many("hooli", ["refund"], 5) == [[]]
    assert retriever.search_many("ACME", ["refund"], 5) == [[]]  # exact match, no case folding
    assert asyncio.run(retriever.search(tenant_id="acme ", query="refund", top_k=5)) == []


@pytest.mark.slow
@pytest.mark.parametrize("tenant", [None, "", "   "])
def test_requests_without_a_tenant_are_refused(retriever: DenseRetriever, tenant: str | None) -> None:
    with pytest.raises(TenantError):
        retriever.search_many(tenant, ["refund"], 5)  # type: ignore[arg-type]
    with pytest.raises(TenantError):
        asyncio.run(retriever.search(tenant_id=tenant, query="refund", top_k=5))  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.parametrize("top_k", [0, -1, True])
def test_bad_top_k_is_refused(retriever: DenseRetriever, top_k: int) -> None:
    with pytest.raises(ValueError, match="top_k"):
        retriever.search_many("acme", ["refund"], top_k)


@pytest.mark.slow
def test_a_query_must_be_text(retriever: DenseRetriever) -> None:
    with pytest.raises(TypeError, match="query #2"):
        retriever.search_many("acme", ["refund", None], 5)  # type: ignore[list-item]
    assert retriever.search_many("acme", [], 5) == []


@pytest.mark.slow
def test_concurrent_searches_are_embedded_together(embedder: Embedder) -> None:
    counting = CountingEncoder(embedder)
    retriever = DenseRetriever.from_chunks(make_chunks(), model=counting, cache=False)
    queries = ["money back", "rocket fuel", "printer jam", "annual leave", "password rules", "lunch"]
    tenants = ["acme", "globex", "initech", "acme", "acme", "globex"]
    expected = [retriever.search_many(t, [q], 2)[0] for t, q in zip(tenants, queries, strict=True)]
    before = counting.calls

    async def all_at_once() -> list[list[RetrievedChunk]]:
        return list(
            await asyncio.gather(
                *(
                    retriever.search(tenant_id=t, query=q, top_k=2)
                    for t, q in zip(tenants, queries, strict=True)
                )
            )
        )

    got = asyncio.run(all_at_once())
    assert [ids(r) for r in got] == [ids(r) for r in expected]
    assert counting.calls - before == 3  # one batch per tenant, not one per query


@pytest.mark.slow
def test_runner_scores_every_case(retriever: DenseRetriever) -> None:
    cases = [
        GoldenCase("q1", "getting my money back", ("acme-refund",), tenant_id="acme"),
        GoldenCase("q2", "rocket propellant", ("globex-rocket",), tenant_id="globex"),
        GoldenCase("q3", "no tenant here", ("acme-refund",)),
    ]
    run = asyncio.run(run_cases(retriever, cases, 2))
    assert run.cases["q1"].ranking[0] == "acme-refund"
    assert run.cases["q2"].ranking[0] == "globex-rocket"
    assert run.cases["q3"].error is not None


@pytest.mark.slow
def test_rebuilding_reuses_the_embedding_cache(embedder: Embedder, tmp_path: Path) -> None:
    counting = CountingEncoder(embedder)
    cache = EmbeddingCache(counting, tmp_path)
    DenseRetriever.from_chunks(make_chunks(), cache=cache)
    assert counting.calls == 1
    again = DenseRetriever.from_chunks(make_chunks(), cache=cache)
    assert counting.calls == 1
    assert again.info()["cache"]["hits"] == 12
    cache.close()


# -- the exact store on hand-made vectors ---------------------------------------------------------


def _chunk(chunk_id: str, tenant: str = "t") -> Chunk:
    return Chunk(chunk_id, chunk_id, tenant, 0, 1, chunk_id)


def test_exact_store_breaks_ties_by_chunk_id_descending() -> None:
    store = ExactVectorStore()
    vectors = np.array([[1, 0], [1, 0], [0, 1], [1, 0]], dtype=np.float32)
    store.add([_chunk("b"), _chunk("a"), _chunk("z"), _chunk("c")], vectors)
    query = np.array([[1, 0]], dtype=np.float32)
    for k in (1, 2, 3, 4, 10):
        (hits,) = store.search_many("t", query, k)
        assert [h.chunk.chunk_id for h in hits] == ["c", "b", "a", "z"][:k]


def test_top_k_rows_keeps_every_tie_at_the_cut_in_order() -> None:
    scores = np.array([[0.5, 0.9, 0.5, 0.5, 0.1], [0.0, 0.0, 0.0, 0.0, 1.0]], dtype=np.float32)
    assert [list(r) for r in top_k_rows(scores, 2)] == [[1, 0], [4, 0]]
    assert [list(r) for r in top_k_rows(scores, 3)] == [[1, 0, 2], [4, 0, 1]]


def test_exact_store_partitions_by_tenant_and_replaces_on_re_add() -> None:
    store = ExactVectorStore()
    store.add([_chunk("x", "a"), _chunk("x", "b")], np.array([[1, 0], [0, 1]], dtype=np.float32))
    store.add([_chunk("x", "a")], np.array([[0.6, 0.8]], dtype=np.float32))
    assert len(store) == 2
    assert store.tenants() == ["a", "b"]
    (hits,) = store.search_many("a", np.array([[1, 0]], dtype=np.float32), 5)
    assert [(h.chunk.tenant_id, round(h.score, 3)) for h in hits] == [("a", 0.6)]
    assert store.search_many("c", np.array([[1, 0]], dtype=np.float32), 5) == [[]]
    with pytest.raises(ValueError, match="dimensions"):
        store.add([_chunk("y", "a")], np.zeros((1, 3), dtype=np.float32))


def test_exact_store_batch_search_equals_one_by_one() -> None:
    rng = np.random.default_rng(7)
    vectors = rng.normal(size=(50, 8)).astype(np.float32)
    store = ExactVectorStore()
    store.add([_chunk(f"c{i:02d}") for i in range(50)], vectors)
    queries = rng.normal(size=(5, 8)).astype(np.float32)
    batch = store.search_many("t", queries, 7)
    for i in range(5):
        (single,) = store.search_many("t", queries[i : i + 1], 7)
        assert [h.chunk.chunk_id for h in single] == [h.chunk.chunk_id for h in batch[i]]
        expected = np.argsort(-(vectors @ queries[i]), kind="stable")[:7]
        assert [h.chunk.chunk_id for h in single] == [f"c{j:02d}" for j in expected]
