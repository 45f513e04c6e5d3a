"""Context assembly (dedupe, top-k, token budget), context metrics and the offline token counter."""

from __future__ import annotations

import math
import time
from pathlib import Path

import pytest

from conftest import KB
from ragaudit.context.assemble import ChunkLookup, assemble_context
from ragaudit.context.context_metrics import (
    context_metrics,
    jaccard,
    near_duplicates,
    shingles,
    summarize_context,
)
from ragaudit.context.tokens import FALLBACK_NAME, token_counter
from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.corpus.model import Document
from ragaudit.corpus.projection import project_case
from ragaudit.data.loading import load_dataset
from ragaudit.data.schema import Evidence, GoldenCase
from ragaudit.errors import InputError

REGEX = token_counter("regex")


@pytest.fixture(scope="module")
def kb() -> tuple[Corpus, dict[str, GoldenCase]]:
    return load_corpus(KB / "corpus.jsonl"), load_dataset(KB / "golden.jsonl").by_id()


def ranked(*ids: str) -> list[tuple[str, float | None]]:
    return [(chunk_id, 10.0 - i) for i, chunk_id in enumerate(ids)]


@pytest.fixture
def no_loaded_encodings(monkeypatch: pytest.MonkeyPatch) -> None:
    """tiktoken keeps every encoding it loaded in a process-wide registry: an earlier test (or a
    machine whose default cache holds cl100k_base) must not decide what these tests see."""
    tiktoken_registry = pytest.importorskip("tiktoken.registry")
    monkeypatch.setattr(tiktoken_registry, "ENCODINGS", {})


@pytest.mark.usefixtures("no_loaded_encodings")
def test_tokenizer_falls_back_offline_without_hanging(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))  # an empty cache: tiktoken would download
    started = time.perf_counter()
    counter = token_counter("auto")
    assert time.perf_counter() - started < 5
    assert counter.name == FALLBACK_NAME
    assert not counter.exact
    assert "fallback" in counter.note
    assert counter.count("API limit: 50,000.") == 7
    with pytest.raises(InputError, match="TIKTOKEN_CACHE_DIR"):
        token_counter("tiktoken:cl100k_base")
    with pytest.raises(InputError, match="unknown tokenizer"):
        token_counter("sentencepiece")


@pytest.mark.usefixtures("no_loaded_encodings")
def test_a_corrupt_cached_encoding_is_not_refetched(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hashlib

    url = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
    (tmp_path / hashlib.sha1(url.encode()).hexdigest()).write_bytes(b"not a bpe file")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    assert token_counter("auto").name == FALLBACK_NAME  # hash mismatch -> would re-download -> refused


def test_assembly_dedupes_cuts_at_k_and_respects_the_budget(kb: tuple[Corpus, dict[str, GoldenCase]]) -> None:
    corpus, cases = kb
    lookup = ChunkLookup.for_corpus(corpus)
    case = cases["acme-warranty-001"]
    ids = (
        "acme-warranty-policy-v2",
        "acme-warranty-policy-v2",
        "acme-faq-hardware",
        "nope",
        "acme-warranty-policy-v1",
    )
    context = assemble_context(ranked(*ids), case, lookup, REGEX, k=3)
    assert context.chunk_ids == ["acme-warranty-policy-v2", "acme-faq-hardware", "nope"]
    assert (context.dropped_duplicates, context.beyond_k) == (1, 1)
    assert [c.rank for c in context.chunks] == [1, 3, 4]
    assert not context.chunks[2].known and context.chunks[2].tokens == 0
    first = context.chunks[0]
    assert (
        first.relevant
        and first.grade == 3
        and first.text.startswith(first.chunk.title if first.chunk else "")
    )
    budget = first.tokens + 1
    cut = assemble_context(ranked(*ids), case, lookup, REGEX, k=3, token_budget=budget)
    assert cut.chunk_ids == ["acme-warranty-policy-v2"]
    assert cut.dropped_by_budget == 2
    assert cut.tokens <= budget
    assert "[1] " in cut.prompt_text()


def test_metrics_on_the_warranty_case(kb: tuple[Corpus, dict[str, GoldenCase]]) -> None:
    corpus, cases = kb
    # v2 graded 3, faq 2, release notes 1, v1 0 (superseded); the demo's judgments are complete, so every
    # other acme document, the shipping policy included, is judged 0 for the case
    case = cases["acme-warranty-001"]
    lookup = ChunkLookup.for_corpus(corpus)
    ids = (
        "acme-warranty-policy-v1",
        "acme-warranty-policy-v2",
        "acme-release-notes-2024",
        "acme-shipping-policy",
    )
    context = assemble_context(ranked(*ids), case, lookup, REGEX, k=5)
    m = context_metrics(context, case)
    assert m.chunks == 4
    assert m.precision_chunks == 0.25
    v2 = context.chunks[1].tokens
    assert m.precision_tokens == pytest.approx(v2 / context.tokens)
    assert m.evidence_coverage == 0.5  # v2's span is in; the FAQ's span is not
    assert m.evidence_present
    # stale: superseded in the corpus (v1); the shipping policy is judged irrelevant (0), not stale
    assert case.relevance["acme-shipping-policy"] == 0
    assert m.staleness == 0.25 and m.stale_chunks == ("acme-warranty-policy-v1",)
    assert m.redundancy == 0.0 and m.foreign_chunks == ()
    empty = context_metrics(assemble_context([], case, lookup, REGEX), case)
    assert (empty.precision_chunks, empty.evidence_coverage, empty.evidence_present) == (0.0, 0.0, False)


def test_unanswerable_cases_have_no_precision_and_foreign_chunks_are_flagged(
    kb: tuple[Corpus, dict[str, GoldenCase]],
) -> None:
    corpus, cases = kb
    case = cases["globex-unanswerable-002"]
    context = assemble_context(
        ranked("acme-warranty-policy-v2", "globex-warranty-tap-v2"),
        case,
        ChunkLookup.for_corpus(corpus),
        REGEX,
    )
    m = context_metrics(context, case)
    assert math.isnan(m.precision_chunks) and math.isnan(m.evidence_coverage)
    assert m.foreign_chunks == ("acme-warranty-policy-v2",)
    assert m.to_json()["precision_chunks"] is None
    summary = summarize_context([(False, m)])
    assert summary["precision_chunks"] is None
    assert summary["cases_with_foreign_chunks"] == 1


def test_span_coverage_needs_the_whole_span_across_chunks() -> None:
    text = "Alpha beta gamma. Delta epsilon zeta. Eta theta iota. Kappa lambda mu."
    corpus = Corpus((Document("d", "t", text),), "mem", "0")
    lookup = ChunkLookup.for_corpus(corpus, "fixed", 4, 0)
    span = Evidence("d", text.index("Delta"), text.index("Kappa"), 3)
    case = project_case(
        GoldenCase("q", "question", None, tenant_id="t", evidence=(span,)),
        {"d": lookup.chunks},
    )
    covering = [c.chunk_id for c in lookup.chunks if c.start < span.end and span.start < c.end]
    assert len(covering) >= 2  # the span is split across chunks
    part = context_metrics(assemble_context(ranked(covering[0]), case, lookup, REGEX), case)
    assert part.evidence_coverage == 0.0
    assert 0.0 < part.evidence_char_recall < 1.0
    both = assemble_context(ranked(*covering), case, lookup, REGEX)
    assert context_metrics(both, case).evidence_coverage == 0.0  # without texts the trimmed gap counts
    whole = context_metrics(both, case, texts={"d": text})
    assert whole.evidence_coverage == 1.0
    assert (
        part.evidence_char_recall < whole.evidence_char_recall < 1.0
    )  # the trimmed blanks are not retrieved


def test_near_duplicates_are_counted_once_after_their_first_copy() -> None:
    base = "Professional includes 50,000 API calls per month with a burst limit of 120 requests per minute."
    docs = (
        Document("a", "t", base),
        Document("b", "t", base + " Prices exclude VAT."),
        Document("c", "t", "Refunds are available within 30 days of purchase for annual plans."),
    )
    corpus = Corpus(docs, "mem", "0")
    case = GoldenCase("q", "q", ("a",), tenant_id="t")
    context = assemble_context(ranked("a", "b", "c"), case, ChunkLookup.for_corpus(corpus), REGEX)
    pairs = near_duplicates(context.chunks, 0.8)
    assert [(p[0], p[1]) for p in pairs] == [("a", "b")]
    assert context_metrics(context, case).redundancy == pytest.approx(1 / 3)
    assert context_metrics(context, case, duplicate_threshold=0.99).redundancy == 0.0
    assert jaccard(shingles("a b"), shingles("a b")) == 1.0
    assert jaccard(frozenset(), frozenset()) == 1.0
