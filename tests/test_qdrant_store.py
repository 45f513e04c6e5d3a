"""The Qdrant store in embedded local mode (the same code path as a server), with the real MiniLM model,
and the BM25-style sparse weights it uses for hybrid search."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from ragaudit.corpus.model import Chunk
from ragaudit.errors import InputError, TenantError
from ragaudit.retrieval.bm25 import BM25Retriever
from ragaudit.retrieval.dense import DenseRetriever
from ragaudit.retrieval.embedder import Embedder, FloatMatrix
from ragaudit.retrieval.qdrant_store import IdfScope, QdrantVectorStore, QueryMode, point_id
from ragaudit.retrieval.sparse_weights import SparseEncoder, analyze, term_index
from ragaudit.retrieval.vector_store import ExactVectorStore

if importlib.util.find_spec("qdrant_client") is None:  # found, not imported: the store imports it at use
    pytest.skip("qdrant-client not installed (the qdrant extra)", allow_module_level=True)

DOCS = [
    ("north", "n-router", "Error code XK-4471 means the router firmware must be reflashed."),
    ("north", "n-refund", "Refunds are paid back to the original card within five business days."),
    ("north", "n-shipping", "Orders over fifty euros ship free of charge across the EU."),
    ("north", "n-battery", "Charge the battery fully before first use to extend the battery lifetime."),
    ("north", "n-warranty", "The warranty covers manufacturing defects of the router for two years."),
    ("north", "doc-1", "North tenant private memo about salaries."),
    ("south", "s-router", "Router error XK-4471 appears when the power supply is too weak."),
    ("south", "s-garden", "Water tomato plants early in the morning during hot summers."),
    ("south", "s-bikes", "Bicycle tyres should be inflated to the pressure printed on the sidewall."),
    ("south", "doc-1", "South tenant private memo about budgets."),
]
QUERIES = [
    "my router shows error XK-4471",
    "when will I get my money back",
    "free delivery threshold",
    "how long is the guarantee",
    "memo",
]


def make_chunks() -> list[Chunk]:
    return [Chunk(cid, cid, tenant, 0, len(text), text) for tenant, cid, text in DOCS]


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder()


@pytest.fixture(scope="module")
def vectors(embedder: Embedder) -> FloatMatrix:
    return embedder.encode([c.index_text for c in make_chunks()])


@pytest.fixture(scope="module")
def query_vectors(embedder: Embedder) -> FloatMatrix:
    return embedder.encode(QUERIES)


@pytest.fixture(scope="module")
def hybrid_store(vectors: FloatMatrix) -> QdrantVectorStore:
    store = QdrantVectorStore("hybrid", location=":memory:", hybrid=True)
    store.add(make_chunks(), vectors)
    return store


def hit_ids(rows: list[list[object]]) -> list[list[str]]:
    return [[h.chunk.chunk_id for h in row] for row in rows]  # type: ignore[attr-defined]


@pytest.mark.slow
@pytest.mark.parametrize("top_k", [1, 3, 100])
def test_same_top_k_as_the_exact_store(vectors: FloatMatrix, query_vectors: FloatMatrix, top_k: int) -> None:
    exact = ExactVectorStore()
    exact.add(make_chunks(), vectors)
    qdrant = QdrantVectorStore("dense", location=":memory:", batch_size=3)
    qdrant.add(make_chunks(), vectors)
    for tenant in ("north", "south"):
        want = exact.search_many(tenant, query_vectors, top_k)
        got = qdrant.search_many(tenant, query_vectors, top_k)
        assert hit_ids(got) == hit_ids(want)  # type: ignore[arg-type]
        for g_row, w_row in zip(got, want, strict=True):
            np.testing.assert_allclose([h.score for h in g_row], [h.score for h in w_row], atol=1e-5)
    qdrant.close()


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["dense", "sparse", "hybrid"])
def test_a_tenant_never_sees_another_tenants_points(
    hybrid_store: QdrantVectorStore, query_vectors: FloatMatrix, mode: QueryMode
) -> None:
    rows = hybrid_store.search_many("north", query_vectors, 1000, texts=QUERIES, mode=mode)
    for row in rows:
        assert {h.chunk.tenant_id for h in row} <= {"north"}
        assert "s-router" not in [h.chunk.chunk_id for h in row]
    memo = rows[QUERIES.index("memo")]
    assert [h.chunk.text for h in memo if h.chunk.chunk_id == "doc-1"] == [DOCS[5][2]]
    empty: list[list[object]] = [[] for _ in QUERIES]
    assert hybrid_store.search_many("west", query_vectors, 10, texts=QUERIES, mode=mode) == empty
    assert hybrid_store.search_many("North", query_vectors[:1], 10, texts=QUERIES[:1], mode=mode) == [[]]


@pytest.mark.slow
def test_same_chunk_id_in_two_tenants_are_two_points(hybrid_store: QdrantVectorStore) -> None:
    assert point_id("north", "doc-1") != point_id("south", "doc-1")
    assert point_id("north", "doc-1") == point_id("north", "doc-1")
    assert hybrid_store.count() == len(DOCS)
    assert hybrid_store.count("south") == 4
    assert hybrid_store.tenants() == ["north", "south"]


@pytest.mark.slow
def test_hybrid_finds_an_exact_code_and_fuses_with_rrf(
    hybrid_store: QdrantVectorStore, query_vectors: FloatMatrix
) -> None:
    (sparse,) = hybrid_store.search_many("north", query_vectors[:1], 10, texts=QUERIES[:1], mode="sparse")
    assert sparse[0].chunk.chunk_id == "n-router"
    assert {h.chunk.chunk_id for h in sparse} == {"n-router", "n-warranty"}  # only chunks sharing a term
    (dense,) = hybrid_store.search_many("north", query_vectors[:1], 10, mode="dense")
    (hybrid,) = hybrid_store.search_many("north", query_vectors[:1], 10, texts=QUERIES[:1])
    assert hybrid[0].chunk.chunk_id == "n-router"
    assert len(hybrid) == len(dense)  # the dense prefetch brings every north chunk
    if dense[0].chunk.chunk_id == "n-router":  # first in both lists: 1/(60+1) twice
        assert hybrid[0].score == pytest.approx(2 / 61)


@pytest.mark.slow
def test_sparse_scores_are_bm25_scores(hybrid_store: QdrantVectorStore, query_vectors: FloatMatrix) -> None:
    bm25 = BM25Retriever.from_chunks(make_chunks())
    for tenant in ("north", "south"):
        got = hybrid_store.search_many(tenant, query_vectors, 10, texts=QUERIES, mode="sparse")
        want = bm25.search_many(tenant, QUERIES, 10)
        for g_row, w_row in zip(got, want, strict=True):
            g = {h.chunk.chunk_id: h.score for h in g_row}
            w = {r["chunk_id"]: r["score"] for r in w_row}
            assert set(g) == set(w)
            for cid, score in w.items():  # bm25s's lucene variant leaves out the constant (k1 + 1)
                assert g[cid] == pytest.approx(score * 2.5, rel=1e-4)


@pytest.mark.slow
def test_idf_is_scoped_to_the_tenant(vectors: FloatMatrix, query_vectors: FloatMatrix) -> None:
    chunks = make_chunks()
    north = [i for i, c in enumerate(chunks) if c.tenant_id == "north"]
    south = [i for i, c in enumerate(chunks) if c.tenant_id == "south"]
    scores: dict[str, list[float]] = {}
    scopes: tuple[IdfScope, ...] = ("tenant", "global")
    for scope in scopes:
        store = QdrantVectorStore(scope, location=":memory:", hybrid=True, idf_scope=scope)
        store.add([chunks[i] for i in north], vectors[north])
        (before,) = store.search_many("north", query_vectors[:1], 5, texts=QUERIES[:1], mode="sparse")
        store.add([chunks[i] for i in south], vectors[south])
        (after,) = store.search_many("north", query_vectors[:1], 5, texts=QUERIES[:1], mode="sparse")
        scores[scope] = [before[0].score, after[0].score]
    assert scores["tenant"][0] == pytest.approx(scores["tenant"][1])  # south's documents change nothing
    assert scores["global"][0] != pytest.approx(scores["global"][1])


@pytest.mark.slow
def test_on_disk_collection_reopens(tmp_path: Path, vectors: FloatMatrix, query_vectors: FloatMatrix) -> None:
    with QdrantVectorStore("kb", path=tmp_path, hybrid=True) as store:
        store.add(make_chunks(), vectors)
        want = store.search_many("south", query_vectors, 3, texts=QUERIES)
    with QdrantVectorStore("kb", path=tmp_path) as store:  # not asked for hybrid: still writes sparse vectors
        assert store.has_sparse
        store.add(make_chunks()[:1], vectors[:1])
    with QdrantVectorStore("kb", path=tmp_path, hybrid=True) as store:
        assert store.dim == vectors.shape[1]
        assert hit_ids(store.search_many("south", query_vectors, 3, texts=QUERIES)) == hit_ids(want)  # type: ignore[arg-type]
        with pytest.raises(InputError, match="dimensional"):
            store.add(make_chunks()[:1], np.zeros((1, 5), dtype=np.float32))
    with QdrantVectorStore("plain", path=tmp_path) as store:
        store.add(make_chunks()[:1], vectors[:1])
    with pytest.raises(InputError, match="no sparse vectors"):
        QdrantVectorStore("plain", path=tmp_path, hybrid=True)
    with QdrantVectorStore("plain", path=tmp_path, hybrid=True, recreate=True) as store:
        assert store.count() == 0


@pytest.mark.slow
def test_query_modes_need_a_hybrid_store_and_texts(vectors: FloatMatrix, query_vectors: FloatMatrix) -> None:
    store = QdrantVectorStore("modes", location=":memory:")
    store.add(make_chunks(), vectors)
    with pytest.raises(ValueError, match="hybrid=True"):
        store.search_many("north", query_vectors, 3, texts=QUERIES, mode="sparse")
    hybrid = QdrantVectorStore("modes2", location=":memory:", hybrid=True)
    hybrid.add(make_chunks(), vectors)
    with pytest.raises(ValueError, match="query text"):
        hybrid.search_many("north", query_vectors, 3)
    assert hybrid.search_many("north", query_vectors[:1], 3, texts=["the of and"], mode="sparse") == [[]]
    (only_dense,) = hybrid.search_many("north", query_vectors[:1], 3, texts=["the of and"])
    assert len(only_dense) == 3  # a query without terms still gets the dense half


@pytest.mark.slow
def test_dense_retriever_over_qdrant(embedder: Embedder, tmp_path: Path) -> None:
    retriever = DenseRetriever.from_chunks(
        make_chunks(), store="qdrant", model=embedder, cache=tmp_path, location=":memory:", hybrid=True
    )
    (top,) = retriever.search_many("north", ["XK-4471"], 1)[0]
    assert (top["chunk_id"], top["tenant_id"]) == ("n-router", "north")
    assert retriever.search_many("south", ["money back", "budget memo"], 1000)[1][0]["chunk_id"] == "doc-1"
    assert retriever.search_many("east", ["router"], 5) == [[]]
    for tenant in (None, "", " "):
        with pytest.raises(TenantError):
            retriever.search_many(tenant, ["router"], 5)  # type: ignore[arg-type]
    retriever.close()


# -- sparse weights -------------------------------------------------------------------------------


def test_bm25_document_weights_follow_the_formula() -> None:
    texts = ["router router error", "router firmware reflashed today again"]
    encoder = SparseEncoder("bm25", k1=1.5, b=0.75)
    terms = analyze(texts)
    avgdl = sum(len(t) for t in terms) / 2
    first = encoder.documents(texts)[0]
    router = term_index(analyze(["router"])[0][0])
    weight = dict(zip(first.indices, first.values, strict=True))[router]
    norm = 1.5 * (1 - 0.75 + 0.75 * len(terms[0]) / avgdl)
    assert weight == pytest.approx(2 * 2.5 / (2 + norm))
    assert list(first.indices) == sorted(set(first.indices))


def test_tf_scheme_and_binary_queries() -> None:
    (doc,) = SparseEncoder("tf").documents(["router router error"])
    assert sorted(doc.values) == [1.0, 2.0]
    (query,) = SparseEncoder().queries(["router router error"])
    assert query.values == (1.0, 1.0)
    assert SparseEncoder().queries(["the and of"])[0].indices == ()
    with pytest.raises(ValueError, match="scheme"):
        SparseEncoder("bm42")  # type: ignore[arg-type]


def test_term_index_is_a_stable_u32() -> None:
    assert term_index("router") == term_index("router")
    assert term_index("router") != term_index("routers")
    assert 0 <= term_index("router") < 2**32
