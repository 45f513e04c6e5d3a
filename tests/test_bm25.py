"""BM25Retriever: tenant isolation inside the index, analysis, ordering, payload, and agreement with bm25s."""

from __future__ import annotations

import asyncio
import random
import sys
from pathlib import Path
from types import MappingProxyType

import pytest

from ragaudit.corpus.model import Chunk, Document, whole_document_chunk
from ragaudit.errors import InputError, MissingDependencyError, TenantError
from ragaudit.retrieval.bm25 import BM25Retriever
from ragaudit.retrieval.protocol import RetrievedChunk, Retriever
from ragaudit.retrieval.tenancy import require_tenant

bm25s = pytest.importorskip("bm25s")
Stemmer = pytest.importorskip("Stemmer")

DOCS = [
    Document("acme-refund", "acme", "A refund is issued within 30 days of purchase.", "Refund policy"),
    Document("acme-pricing", "acme", "The starter plan costs 10 dollars per month.", "Pricing"),
    Document("acme-onboarding", "acme", "New users receive a welcome email and a setup call."),
    Document(
        "globex-merger",
        "globex",
        "Confidential: Globex will acquire Initech; the merger closes in March.",
        "Merger",
        MappingProxyType({"source_id": "vault://globex/merger.pdf", "version": 2}),
    ),
    Document("globex-refund", "globex", "Globex refunds are processed within 14 days.", "Refunds"),
    Document("initech-tps", "initech", "Every TPS report needs the new cover sheet.", "TPS reports"),
]
CHUNKS = [whole_document_chunk(d) for d in DOCS]


@pytest.fixture(scope="module")
def retriever() -> BM25Retriever:
    return BM25Retriever.from_chunks(CHUNKS)


def search(r: BM25Retriever, tenant: str, query: str, top_k: int = 10) -> list[RetrievedChunk]:
    return asyncio.run(r.search(tenant_id=tenant, query=query, top_k=top_k))


def test_implements_the_protocol_and_records_build_time(retriever: BM25Retriever) -> None:
    assert isinstance(retriever, Retriever)
    assert retriever.tenants == ("acme", "globex", "initech")
    assert retriever.chunk_count("acme") == 3
    assert retriever.chunk_count("nobody") == 0
    assert retriever.build_seconds > 0


def test_another_tenants_document_is_never_returned(retriever: BM25Retriever) -> None:
    whole_corpus = len(CHUNKS)
    as_owner = search(retriever, "globex", "Initech merger confidential", whole_corpus)
    assert as_owner[0]["chunk_id"] == "globex-merger"
    for query in ("Initech merger confidential", "Globex refunds", "TPS report cover sheet"):
        results = search(retriever, "acme", query, whole_corpus)
        assert {r["tenant_id"] for r in results} <= {"acme"}
        assert {r["chunk_id"] for r in results} <= {"acme-refund", "acme-pricing", "acme-onboarding"}
    assert search(retriever, "acme", "Initech merger confidential", whole_corpus) == []


def test_a_query_both_tenants_match_is_answered_from_the_callers_partition(retriever: BM25Retriever) -> None:
    acme = search(retriever, "acme", "refund within days", len(CHUNKS))
    globex = search(retriever, "globex", "refund within days", len(CHUNKS))
    assert [r["chunk_id"] for r in acme] == ["acme-refund"]
    assert [r["chunk_id"] for r in globex] == ["globex-refund"]


@pytest.mark.parametrize("tenant", ["ACME", "Acme", "acme ", " acme", "acme\n", "nobody"])
def test_unknown_and_variant_tenants_get_nothing(retriever: BM25Retriever, tenant: str) -> None:
    assert search(retriever, tenant, "refund", len(CHUNKS)) == []
    assert retriever.search_many(tenant, ["refund", "merger"], len(CHUNKS)) == [[], []]


@pytest.mark.parametrize("tenant", [None, "", "   ", "\t", 42])
def test_missing_or_blank_tenant_is_refused(retriever: BM25Retriever, tenant: object) -> None:
    with pytest.raises(TenantError, match="refused"):
        search(retriever, tenant, "refund")  # type: ignore[arg-type]
    with pytest.raises(TenantError, match="refused"):
        retriever.search_many(tenant, ["refund"], 5)  # type: ignore[arg-type]


def test_require_tenant_returns_the_id_unchanged() -> None:
    assert require_tenant(" acme") == " acme"
    with pytest.raises(TenantError, match="whitespace"):
        require_tenant("  ")
    with pytest.raises(TenantError, match="no tenant_id"):
        require_tenant(None)


def test_stemming_matches_inflections(retriever: BM25Retriever) -> None:
    # acme's document says "refund", the query says "refunds"; globex's says "refunds", the query "refund".
    assert [r["chunk_id"] for r in search(retriever, "acme", "refunds")] == ["acme-refund"]
    assert [r["chunk_id"] for r in search(retriever, "globex", "refunding")] == ["globex-refund"]
    assert [r["chunk_id"] for r in search(retriever, "initech", "reports")] == ["initech-tps"]


@pytest.mark.parametrize("query", ["", "   ", "?!", "the and of", "zyzzyva"])
def test_queries_without_indexable_terms_return_nothing(retriever: BM25Retriever, query: str) -> None:
    assert search(retriever, "acme", query) == []


def test_top_k_cuts_and_may_exceed_the_partition(retriever: BM25Retriever) -> None:
    everything = search(retriever, "acme", "refund plan users", 1000)
    scores = [r["score"] for r in everything]
    assert scores == sorted(scores, reverse=True)
    assert len(everything) == 3
    assert search(retriever, "acme", "refund plan users", 1) == everything[:1]
    with pytest.raises(ValueError, match="top_k"):
        search(retriever, "acme", "refund", 0)


def test_payload_carries_content_source_tenant_and_offsets(retriever: BM25Retriever) -> None:
    [hit] = search(retriever, "globex", "merger", 1)
    assert hit["content"] == DOCS[3].text
    assert hit["source_id"] == "vault://globex/merger.pdf"
    assert hit["tenant_id"] == "globex"
    assert hit["metadata"] == {
        "source_id": "vault://globex/merger.pdf",
        "version": 2,
        "doc_id": "globex-merger",
        "start": 0,
        "end": len(DOCS[3].text),
        "title": "Merger",
    }
    [plain] = search(retriever, "acme", "onboarding welcome", 1)
    assert plain["source_id"] == "acme-onboarding"
    assert hit["score"] > 0


def test_chunks_of_one_document_and_equal_scores_are_ordered_by_chunk_id_descending() -> None:
    text = "refund window refund window"
    chunks = [
        Chunk(f"doc#{n}", "doc", "t", n * 100, n * 100 + len(text), text, metadata=MappingProxyType({}))
        for n in range(5)
    ]
    shuffled = chunks[:]
    random.Random(7).shuffle(shuffled)
    first = BM25Retriever.from_chunks(chunks)
    second = BM25Retriever.from_chunks(shuffled)
    ranking = [r["chunk_id"] for r in first.search_many("t", ["refund"], 3)[0]]
    assert ranking == ["doc#4", "doc#3", "doc#2"]
    assert second.search_many("t", ["refund"], 3) == first.search_many("t", ["refund"], 3)
    assert first.search_many("t", ["window"], 5)[0][0]["metadata"]["start"] == 400


def test_search_many_equals_search(retriever: BM25Retriever) -> None:
    queries = ["refund", "starter plan price", "", "merger", "welcome email setup"]
    batch = retriever.search_many("acme", queries, 2)
    assert batch == [search(retriever, "acme", q, 2) for q in queries]


def test_query_terms_are_remembered_and_equal_a_fresh_analysis(monkeypatch: pytest.MonkeyPatch) -> None:
    from ragaudit.retrieval import bm25

    analyzer = bm25.Analyzer(bm25.BM25Params())
    queries = ["Routers reflashing firmware", "", "the a of", "routers", "Routers reflashing firmware"]
    expected = analyzer(queries)
    first = analyzer.query_terms(queries)
    assert first == expected and expected[0] == ["router", "reflash", "firmwar"] and expected[1] == []
    first[0].append("mutated")  # a caller's lists are its own, never the memo's
    calls: list[list[str]] = []
    monkeypatch.setattr(bm25.Analyzer, "__call__", lambda self, texts: calls.append(list(texts)) or [])
    assert analyzer.query_terms(queries) == expected and calls == []  # each text was analysed already
    monkeypatch.undo()
    monkeypatch.setattr(bm25, "QUERY_MEMO", 2)  # a full memo is emptied, never wrong
    small = bm25.Analyzer(bm25.BM25Params())
    for _ in range(2):
        assert small.query_terms(queries) == expected and len(small._query_memo) <= 4


def test_scores_equal_bm25s_on_the_tenants_own_documents() -> None:
    """Reference tier: each partition scores exactly as a standalone bm25s index over that tenant's docs."""
    retriever = BM25Retriever.from_chunks(CHUNKS, k1=1.2, b=0.5, method="atire")
    acme = [c for c in CHUNKS if c.tenant_id == "acme"]
    stemmer = Stemmer.Stemmer("english")
    reference = bm25s.BM25(k1=1.2, b=0.5, method="atire")
    tokens = bm25s.tokenize(
        [c.index_text for c in acme], stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False
    )
    reference.index(tokens, show_progress=False)
    query = "refund plan for new users"
    q_tokens = bm25s.tokenize(query, stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)
    expected = {
        c.chunk_id: float(s) for c, s in zip(acme, reference.get_scores(q_tokens[0]), strict=True) if s > 0
    }
    got = {r["chunk_id"]: r["score"] for r in search(retriever, "acme", query)}
    assert got == pytest.approx(expected)


def test_defaults_are_bm25s_defaults(retriever: BM25Retriever) -> None:
    reference = bm25s.BM25()
    assert (retriever.params.k1, retriever.params.b, retriever.params.delta, retriever.params.method) == (
        reference.k1,
        reference.b,
        reference.delta,
        reference.method,
    )


def test_parameters_change_the_scores(retriever: BM25Retriever) -> None:
    other = BM25Retriever.from_chunks(CHUNKS, k1=0.9, b=0.2)
    a = search(retriever, "acme", "refund plan")
    b = search(other, "acme", "refund plan")
    assert [r["chunk_id"] for r in a] == [r["chunk_id"] for r in b]
    assert a[0]["score"] != b[0]["score"]


def test_no_stemming_and_no_stopwords_are_options() -> None:
    plain = BM25Retriever.from_chunks(CHUNKS, stemmer=None, stopwords=None)
    assert search(plain, "acme", "refunds") == []
    assert [r["chunk_id"] for r in search(plain, "acme", "the")] != []


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"method": "bm99"}, "unknown BM25 method"),
        ({"k1": -1.0}, "k1"),
        ({"b": 1.5}, "between 0 and 1"),
        ({"stemmer": "klingon"}, "unknown stemmer language"),
    ],
)
def test_bad_parameters_are_explained(params: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BM25Retriever.from_chunks(CHUNKS, **params)  # type: ignore[arg-type]


def test_corpus_problems_are_input_errors() -> None:
    twice = [CHUNKS[0], CHUNKS[0]]
    with pytest.raises(InputError, match="appears twice in tenant 'acme'"):
        BM25Retriever.from_chunks(twice)
    blank = Chunk("x", "x", " ", 0, 1, "x")
    with pytest.raises(InputError, match="no usable tenant_id"):
        BM25Retriever.from_chunks([blank])
    same_id_two_tenants = [Chunk("faq", "faq", t, 0, 6, "refund") for t in ("a", "b")]
    shared = BM25Retriever.from_chunks(same_id_two_tenants)
    assert [r["tenant_id"] for r in shared.search_many("b", ["refund"], 5)[0]] == ["b"]


def test_a_tenant_with_only_stopwords_or_no_chunks_is_served_empty() -> None:
    empty = BM25Retriever.from_chunks([])
    assert empty.search_many("acme", ["refund"], 5) == [[]]
    stop = BM25Retriever.from_chunks([Chunk("s", "s", "t", 0, 10, "the and of")])
    assert stop.search_many("t", ["the"], 5) == [[]]


def test_missing_bm25s_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "bm25s", None)
    with pytest.raises(MissingDependencyError, match=r"ragaudit\[bm25\]"):
        BM25Retriever.from_chunks(CHUNKS)


@pytest.mark.beir
def test_business_reports_matches_standalone_bm25s(beir_root: Path) -> None:
    """On a real BEIR set the retriever ranks like bm25s itself (the bench does this on all sets)."""
    from ragaudit.data.beir import iter_beir_corpus, load_beir
    from ragaudit.evaluation.evaluate import evaluate
    from ragaudit.metrics.policy import Policy

    folder = beir_root / "business-reports"
    if not folder.is_dir():
        pytest.skip(f"{folder} not found")
    docs = iter_beir_corpus(folder / "corpus.jsonl")
    chunks = [
        Chunk(
            str(d["doc_id"]),
            str(d["doc_id"]),
            "default",
            0,
            len(str(d["text"])),
            str(d["text"]),
            str(d["title"]),
        )
        for d in docs
    ]
    dataset = load_beir(folder)
    retriever = BM25Retriever.from_chunks(chunks)
    ours = retriever.search_many("default", [c.query for c in dataset.cases], 10)
    run = {c.id: [r["chunk_id"] for r in res] for c, res in zip(dataset.cases, ours, strict=True)}

    stemmer = Stemmer.Stemmer("english")
    texts = [c.index_text for c in chunks]
    reference = bm25s.BM25()
    reference.index(
        bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False),
        show_progress=False,
    )
    q_tokens = bm25s.tokenize(
        [c.query for c in dataset.cases],
        stopwords="en",
        stemmer=stemmer,
        return_ids=False,
        show_progress=False,
    )
    ids, _ = reference.retrieve(q_tokens, k=10, show_progress=False)
    ref_run = {
        c.id: [chunks[int(i)].chunk_id for i in row] for c, row in zip(dataset.cases, ids, strict=True)
    }

    policy = Policy(gain="linear")
    mine = evaluate(dataset, run, "nDCG@10", policy).metrics["nDCG@10"]
    theirs = evaluate(dataset, ref_run, "nDCG@10", policy).metrics["nDCG@10"]
    assert mine > 0.05
    assert abs(mine - theirs) < 0.005
