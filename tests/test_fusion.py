"""Fusion: hand-computed RRF and weighted fusion, and HybridRetriever over stub and real BM25 retrievers."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import pytest

from ragaudit.corpus.model import Document, whole_document_chunk
from ragaudit.errors import TenantError
from ragaudit.retrieval.fusion import HybridRetriever, normalize_scores, rrf_fuse, weighted_fuse
from ragaudit.retrieval.protocol import RetrievedChunk, Retriever

L1 = [("a", 10.0), ("b", 6.0), ("c", 2.0)]
L2 = [("c", 0.9), ("d", 0.5), ("a", 0.1)]


def ids(fused: list[tuple[str, float]]) -> list[str]:
    return [chunk_id for chunk_id, _ in fused]


# --- reciprocal-rank fusion -------------------------------------------------------------------------


def test_rrf_hand_computed() -> None:
    # a: ranks 1 and 3; c: ranks 3 and 1; b: rank 2 in L1 only; d: rank 2 in L2 only.
    fused = rrf_fuse([L1, L2], k=60)
    expected = {"a": 1 / 61 + 1 / 63, "b": 1 / 62, "c": 1 / 63 + 1 / 61, "d": 1 / 62}
    assert dict(fused) == pytest.approx(expected)
    # a and c tie exactly, as do b and d: chunk id descending breaks both ties.
    assert fused[0][1] == fused[1][1]
    assert fused[2][1] == fused[3][1]
    assert ids(fused) == ["c", "a", "d", "b"]


def test_rrf_ties_are_broken_by_chunk_id_descending() -> None:
    fused = rrf_fuse([[("x", 1.0)], [("y", 1.0)], [("m", None)]])
    assert ids(fused) == ["y", "x", "m"]
    assert fused[0][1] == fused[1][1] == fused[2][1] == 1 / 61


def test_rrf_sums_are_exact_regardless_of_list_order() -> None:
    lists = [[("p", None), ("q", None), ("r", None)], [("q", None), ("r", None), ("p", None)]]
    lists.append([("r", None), ("p", None), ("q", None)])
    fused = rrf_fuse(lists, k=1)
    assert fused[0][1] == fused[1][1] == fused[2][1] == math.fsum([1 / 2, 1 / 3, 1 / 4])
    assert ids(fused) == ["r", "q", "p"]


def test_rrf_weights_and_k() -> None:
    fused = rrf_fuse([L1, L2], weights=[2.0, 1.0], k=0)
    assert dict(fused) == pytest.approx({"a": 2 / 1 + 1 / 3, "b": 2 / 2, "c": 2 / 3 + 1 / 1, "d": 1 / 2})
    assert ids(fused) == ["a", "c", "b", "d"]
    assert ids(rrf_fuse([L1, L2], weights=[0.0, 1.0])) == ["c", "d", "a", "b"]


def test_rrf_counts_a_repeated_id_once_at_its_first_rank() -> None:
    fused = dict(rrf_fuse([[("a", None), ("a", None), ("b", None)]], k=60))
    assert fused == pytest.approx({"a": 1 / 61, "b": 1 / 62})


def test_rrf_of_nothing_is_nothing() -> None:
    assert rrf_fuse([]) == []
    assert rrf_fuse([[], []]) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"weights": [1.0]}, "one weight per retriever"),
        ({"weights": [1.0, -1.0]}, ">= 0"),
        ({"weights": [0.0, 0.0]}, "all 0"),
        ({"weights": [1.0, float("nan")]}, "finite"),
        ({"k": -1}, "rrf_k"),
    ],
)
def test_rrf_rejects_bad_parameters(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        rrf_fuse([L1, L2], **kwargs)


# --- weighted score fusion --------------------------------------------------------------------------


def test_minmax_weighted_hand_computed() -> None:
    # L1 normalises to a=1, b=0.5, c=0; L2 to c=1, d=0.5, a=0; absent ids get the list's minimum, 0.
    fused = weighted_fuse([L1, L2], normalize="minmax")
    assert fused == [("c", 1.0), ("a", 1.0), ("d", 0.5), ("b", 0.5)]
    weighted = weighted_fuse([L1, L2], weights=[0.7, 0.3])
    assert dict(weighted) == pytest.approx({"a": 0.7, "b": 0.35, "c": 0.3, "d": 0.15})
    assert ids(weighted) == ["a", "b", "c", "d"]


def test_zscore_weighted_hand_computed_absent_gets_the_lists_minimum() -> None:
    # L1 [10, 6, 2]: mean 6, std sqrt(32/3) -> a=+sqrt(1.5), b=0, c=-sqrt(1.5)
    # L3 [3, 1]: mean 2, std 1 -> c=+1, d=-1; a and b are absent from L3 and get its minimum, -1;
    # d is absent from L1 and gets its minimum, -sqrt(1.5).
    root = math.sqrt(1.5)
    fused = weighted_fuse([L1, [("c", 3.0), ("d", 1.0)]], normalize="zscore")
    assert ids(fused) == ["a", "c", "b", "d"]
    assert dict(fused) == pytest.approx({"a": root - 1, "b": -1.0, "c": 1 - root, "d": -1 - root})


def test_normalisation_of_constant_and_empty_lists() -> None:
    assert normalize_scores([3.0, 3.0], "minmax") == [1.0, 1.0]
    assert normalize_scores([3.0, 3.0], "zscore") == [0.0, 0.0]
    assert normalize_scores([], "minmax") == []
    assert normalize_scores([4.0, 2.0, 0.0], "minmax") == [1.0, 0.5, 0.0]
    with pytest.raises(ValueError, match="minmax"):
        normalize_scores([1.0], "rank")  # type: ignore[arg-type]
    # an empty list adds nothing; a single result normalises to 1 under min-max
    assert weighted_fuse([[("a", 5.0)], []]) == [("a", 1.0)]


@pytest.mark.parametrize("bad", [None, float("nan"), float("inf")])
def test_weighted_fusion_needs_finite_scores(bad: float | None) -> None:
    with pytest.raises(ValueError, match=r"ranking #2 .* use method='rrf'"):
        weighted_fuse([L1, [("z", bad)]])


# --- HybridRetriever over stub retrievers -----------------------------------------------------------


def chunk(chunk_id: str, score: float, tenant: str = "t", **meta: Any) -> RetrievedChunk:
    return {
        "chunk_id": chunk_id,
        "score": score,
        "content": f"text of {chunk_id}",
        "source_id": f"src-{chunk_id}",
        "tenant_id": tenant,
        "metadata": dict(meta),
    }


class FixedRetriever:
    """A stub retriever with a fixed ranking that records every request it gets."""

    def __init__(self, results: list[RetrievedChunk], started: asyncio.Event | None = None) -> None:
        self.results = results
        self.calls: list[tuple[str, str, int]] = []
        self.started = started
        self.wait_for: asyncio.Event | None = None

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        self.calls.append((tenant_id, query, top_k))
        if self.started is not None:
            self.started.set()
        if self.wait_for is not None:
            await asyncio.wait_for(self.wait_for.wait(), 2.0)
        return self.results[:top_k]


def run(retriever: Retriever, tenant: Any, query: str = "q", top_k: int = 10) -> list[RetrievedChunk]:
    return asyncio.run(retriever.search(tenant_id=tenant, query=query, top_k=top_k))


def test_hybrid_fuses_with_rrf_and_keeps_the_payload() -> None:
    first = FixedRetriever([chunk("a", 10.0, page=1), chunk("b", 6.0), chunk("c", 2.0)])
    second = FixedRetriever([chunk("c", 0.9, page=9), chunk("d", 0.5), chunk("a", 0.1)])
    hybrid = HybridRetriever([first, second], depth=50)
    assert isinstance(hybrid, Retriever)
    results = run(hybrid, "t", "refund", 3)
    assert [r["chunk_id"] for r in results] == ["c", "a", "d"]
    assert [r["score"] for r in results] == pytest.approx([1 / 61 + 1 / 63, 1 / 63 + 1 / 61, 1 / 62])
    assert (results[1]["content"], results[1]["source_id"], results[1]["tenant_id"]) == (
        "text of a",
        "src-a",
        "t",
    )
    assert results[1]["metadata"] == {
        "page": 1,
        "fusion": {"method": "rrf", "ranks": [1, 3], "scores": [10.0, 0.1]},
    }
    # c's payload comes from the first retriever that returned it, so the second's page=9 is not used.
    assert results[0]["metadata"] == {"fusion": {"method": "rrf", "ranks": [3, 1], "scores": [2.0, 0.9]}}
    assert results[2]["metadata"]["fusion"]["ranks"] == [None, 2]
    assert results[2]["metadata"]["fusion"]["scores"] == [None, 0.5]
    assert first.calls == second.calls == [("t", "refund", 50)]
    assert first.results[0]["metadata"] == {"page": 1}  # sub-results are not mutated


def test_hybrid_weighted_matches_weighted_fuse() -> None:
    first = FixedRetriever([chunk(c, s) for c, s in L1])
    second = FixedRetriever([chunk(c, s) for c, s in L2])
    hybrid = HybridRetriever([first, second], method="weighted", weights=[0.7, 0.3], normalize="minmax")
    results = run(hybrid, "t")
    assert [(r["chunk_id"], r["score"]) for r in results] == weighted_fuse([L1, L2], [0.7, 0.3])


def test_hybrid_asks_for_top_k_when_it_exceeds_depth() -> None:
    stub = FixedRetriever([chunk("a", 1.0)])
    run(HybridRetriever([stub], depth=5), "t", top_k=20)
    assert stub.calls == [("t", "q", 20)]


def test_hybrid_queries_sub_retrievers_concurrently() -> None:
    async def scenario() -> list[RetrievedChunk]:
        first_started, second_started = asyncio.Event(), asyncio.Event()
        first = FixedRetriever([chunk("a", 1.0)], first_started)
        second = FixedRetriever([chunk("b", 1.0)], second_started)
        first.wait_for, second.wait_for = second_started, first_started  # each waits for the other
        return await HybridRetriever([first, second]).search(tenant_id="t", query="q", top_k=5)

    assert [r["chunk_id"] for r in asyncio.run(scenario())] == ["b", "a"]


@pytest.mark.parametrize("tenant", [None, "", "  ", 7])
def test_hybrid_refuses_a_missing_tenant_before_querying(tenant: Any) -> None:
    stub = FixedRetriever([chunk("a", 1.0)])
    with pytest.raises(TenantError, match="refused"):
        run(HybridRetriever([stub]), tenant)
    assert stub.calls == []


def test_hybrid_passes_a_sub_retrievers_leak_through_for_the_audit() -> None:
    leaky = FixedRetriever([chunk("other", 5.0, tenant="globex")])
    results = run(HybridRetriever([leaky, FixedRetriever([chunk("own", 1.0)])]), "t")
    assert {r["chunk_id"]: r["tenant_id"] for r in results} == {"other": "globex", "own": "t"}


def test_hybrid_propagates_a_failing_sub_retriever() -> None:
    class Broken:
        async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
            raise ConnectionError("index offline")

    with pytest.raises(ConnectionError, match="index offline"):
        run(HybridRetriever([FixedRetriever([chunk("a", 1.0)]), Broken()]), "t")


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"method": "max"}, "unknown fusion method"),
        ({"normalize": "rank"}, "unknown score normalisation"),
        ({"weights": [1.0, 2.0, 3.0]}, "one weight per retriever"),
        ({"rrf_k": -5}, "rrf_k"),
        ({"depth": 0}, "positive integer"),
    ],
)
def test_hybrid_rejects_bad_configuration(kwargs: dict[str, Any], message: str) -> None:
    stubs = [FixedRetriever([]), FixedRetriever([])]
    with pytest.raises(ValueError, match=message):
        HybridRetriever(stubs, **kwargs)
    with pytest.raises(ValueError, match="at least one retriever"):
        HybridRetriever([])


# --- HybridRetriever over two real BM25 retrievers ---------------------------------------------------

DOCS = [
    Document(
        "acme-refund", "acme", "A refund is issued within 30 days of purchase. Refund requests go to billing."
    ),
    Document(
        "acme-refund-old",
        "acme",
        "Refund policy 2019: refunds within 60 days, superseded by the 2024 policy.",
    ),
    Document("acme-pricing", "acme", "The starter plan costs 10 dollars per month; billing is monthly."),
    Document("globex-refund", "globex", "Globex refund requests: refunds are processed within 14 days."),
    Document("globex-merger", "globex", "Globex will acquire Initech; billing systems merge in March."),
]


@pytest.fixture(scope="module")
def two_bm25() -> tuple[Retriever, Retriever]:
    pytest.importorskip("bm25s")
    from ragaudit.retrieval.bm25 import BM25Retriever

    chunks = [whole_document_chunk(d) for d in DOCS]
    return BM25Retriever.from_chunks(chunks), BM25Retriever.from_chunks(chunks, k1=0.6, b=0.1, stemmer=None)


@pytest.mark.parametrize("method", ["rrf", "weighted"])
def test_hybrid_of_two_bm25_retrievers(two_bm25: tuple[Retriever, Retriever], method: str) -> None:
    stemmed, plain = two_bm25
    hybrid = HybridRetriever([stemmed, plain], method=method, normalize="zscore")  # type: ignore[arg-type]
    query = "refunds billing"
    sub = [run(stemmed, "acme", query, 100), run(plain, "acme", query, 100)]
    assert [r["chunk_id"] for r in sub[0]] != [r["chunk_id"] for r in sub[1]]
    results = run(hybrid, "acme", query, 10)
    expected = hybrid.fuse([[(r["chunk_id"], r["score"]) for r in lst] for lst in sub])
    assert [(r["chunk_id"], r["score"]) for r in results] == expected
    assert {r["tenant_id"] for r in results} == {"acme"}
    # stemmed: refund > refund-old > pricing; unstemmed: refund-old > pricing > refund. Fused, the
    # chunk both rank high leads, and pricing (ranked low by the stemmed one) comes last.
    assert [r["chunk_id"] for r in results] == ["acme-refund-old", "acme-refund", "acme-pricing"]


def test_hybrid_of_bm25_keeps_tenants_apart(two_bm25: tuple[Retriever, Retriever]) -> None:
    hybrid = HybridRetriever(list(two_bm25))
    assert [r["chunk_id"] for r in run(hybrid, "acme", "Initech acquire merger", 100)] == []
    assert [r["chunk_id"] for r in run(hybrid, "globex", "Initech acquire merger", 100)] == ["globex-merger"]
    assert run(hybrid, "ACME", "refund", 100) == []
    assert run(hybrid, "acme ", "refund", 100) == []


def test_hybrid_batch_path_equals_one_query_at_a_time() -> None:
    from conftest import KB
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.corpus.model import whole_document_chunk as whole
    from ragaudit.retrieval.bm25 import BM25Retriever
    from ragaudit.runner.execute import supports_batches

    chunks = [whole(d) for d in load_corpus(KB / "corpus.jsonl").documents]
    for method in ("rrf", "weighted"):
        hybrid = HybridRetriever(
            [BM25Retriever.from_chunks(chunks), BM25Retriever.from_chunks(chunks, k1=0.9, b=0.4)],
            method=method,
        )
        assert supports_batches(hybrid)
        queries = ["refund window for annual plans", "pro plan api limit", "zzz nothing matches"]
        batched = hybrid.search_many("acme", queries, 5)
        assert batched == [run(hybrid, "acme", q, 5) for q in queries]
        assert all(c["tenant_id"] == "acme" for hits in batched for c in hits)
    one_by_one = HybridRetriever(
        [hybrid, FixedRetriever([chunk("x", 1.0)])]
    )  # a sub-retriever without search_many
    assert not one_by_one.batchable
    assert not supports_batches(one_by_one)
    with pytest.raises(TypeError, match="search_many"):
        one_by_one.search_many("acme", ["q"], 5)
