"""Chunkers: exact offsets, deterministic ids, token budgets, and clear errors on bad configurations."""

from __future__ import annotations

import re
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragaudit.corpus.chunkers import (
    STRATEGIES,
    Chunker,
    chunk_corpus,
    count_tokens,
    make_chunker,
    split_sentences,
)
from ragaudit.corpus.loading import Corpus
from ragaudit.corpus.model import Chunk, Document
from ragaudit.errors import ChunkerError

DOC = Document(
    "guide",
    "acme",
    "# Setup\n\nInstall the agent. Then start it!\n\nIt listens on port 8080.\n## Usage\nRun it? Yes.",
    "Admin guide",
    MappingProxyType({"version": "2", "status": "active"}),
)


def _texts(chunks: list[Chunk]) -> list[str]:
    return [c.text for c in chunks]


def test_count_tokens_uses_words_and_single_punctuation() -> None:
    assert count_tokens("API limit: 50,000.") == 7
    assert count_tokens("  ") == 0
    assert count_tokens("don't") == 3


def test_whole_chunker_keeps_the_document_id() -> None:
    [chunk] = make_chunker("whole").chunk(DOC)
    assert (chunk.chunk_id, chunk.doc_id, chunk.start, chunk.end, chunk.text) == (
        "guide",
        "guide",
        0,
        len(DOC.text),
        DOC.text,
    )


def test_fixed_windows_advance_by_size_minus_overlap() -> None:
    doc = Document("d", "t", "a b c d e f g")
    chunks = make_chunker("fixed", size=3, overlap=1).chunk(doc)
    assert _texts(chunks) == ["a b c", "c d e", "e f g"]
    assert [(c.chunk_id, c.start, c.end) for c in chunks] == [("d#0", 0, 5), ("d#1", 4, 9), ("d#2", 8, 13)]
    assert _texts(make_chunker("fixed", size=3, overlap=0).chunk(doc)) == ["a b c", "d e f", "g"]


def test_sentence_chunker_packs_whole_sentences_and_cuts_only_an_oversized_one() -> None:
    doc = Document("d", "t", "One two. Three four five. Six! A very long sentence of many words here.")
    chunks = make_chunker("sentence", size=7, overlap=0).chunk(doc)
    assert _texts(chunks) == [
        "One two. Three four five.",
        "Six! A very long sentence of",
        "many words here.",
    ]
    overlapped = make_chunker("sentence", size=7, overlap=4).chunk(doc)
    assert _texts(overlapped)[:2] == ["One two. Three four five.", "Three four five. Six! A"]


def test_sentence_splitter_handles_quotes_and_blank_lines() -> None:
    text = 'He said "stop." Then left\n\nnew paragraph'
    assert [text[a:b] for a, b in split_sentences(text, 0, len(text))] == [
        'He said "stop."',
        "Then left",
        "new paragraph",
    ]


def test_recursive_chunker_follows_headings_then_paragraphs() -> None:
    chunks = make_chunker("recursive", size=12, overlap=0).chunk(DOC)
    assert _texts(chunks) == [
        "# Setup\n\nInstall the agent. Then start it!",
        "It listens on port 8080.",
        "## Usage\nRun it? Yes.",
    ]
    large = make_chunker("recursive", size=100, overlap=0).chunk(DOC)
    assert _texts(large) == [DOC.text]


def test_windows_line_ends_still_mark_paragraphs_and_headings() -> None:
    doc = Document("d", "t", DOC.text.replace("\n", "\r\n"))
    chunks = make_chunker("recursive", size=12, overlap=0).chunk(doc)
    assert [c.text.replace("\r\n", "\n") for c in chunks] == _texts(
        make_chunker("recursive", 12, 0).chunk(DOC)
    )


def test_chunks_copy_owner_title_and_metadata() -> None:
    for strategy in STRATEGIES:
        for chunk in make_chunker(strategy, 5, 1).chunk(DOC):
            assert (chunk.tenant_id, chunk.title, chunk.metadata) == (DOC.tenant_id, DOC.title, DOC.metadata)
            assert chunk.index_text == f"{DOC.title}\n{chunk.text}"


def test_a_document_without_tokens_still_yields_one_chunk() -> None:
    doc = Document("blank", "t", "  \n ", "Title only")
    for strategy in STRATEGIES:
        [chunk] = make_chunker(strategy, 4, 0).chunk(doc)
        assert (chunk.start, chunk.end, chunk.text) == (0, 4, doc.text)


def test_chunkers_describe_themselves() -> None:
    chunker = make_chunker("recursive", 256, 32)
    assert isinstance(chunker, Chunker)
    assert chunker.name == "recursive-256-32"
    assert chunker.config["strategy"] == "recursive"
    assert (chunker.config["size"], chunker.config["overlap"]) == (256, 32)
    assert make_chunker("whole").name == "whole"


@pytest.mark.parametrize(
    ("strategy", "size", "overlap", "message"),
    [
        (
            "pages",
            10,
            0,
            "unknown chunking strategy 'pages'; valid strategies: whole, fixed, sentence, recursive",
        ),
        ("fixed", 0, 0, "chunk size must be a positive number of tokens (got 0)"),
        ("sentence", 10, 10, "chunk overlap (10) must be smaller than the chunk size (10)"),
        ("recursive", 10, -1, "chunk overlap must be 0 or more tokens (got -1)"),
        ("fixed", 2.5, 0, "chunk size must be an integer number of tokens (got 2.5)"),
    ],
)
def test_bad_configurations_raise_clear_value_errors(
    strategy: str, size: int, overlap: int, message: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        make_chunker(strategy, size, overlap)
    with pytest.raises(ChunkerError):
        make_chunker(strategy, size, overlap)


def test_chunk_corpus_chunks_every_document_in_order() -> None:
    corpus = Corpus((Document("a", "t", "x y z"), Document("b", "u", "w")), "mem", "0")
    chunks = chunk_corpus(corpus, make_chunker("fixed", 2, 0))
    assert [(c.chunk_id, c.tenant_id, c.text) for c in chunks] == [
        ("a#0", "t", "x y"),
        ("a#1", "t", "z"),
        ("b#0", "u", "w"),
    ]


_PIECES = [*"ab Zé9.,!?#\n\t-'\"", "\n\n", "## ", ". ", "\u3002", "\u00a0", "\u2028", "\x1c"]
_TEXTS = st.one_of(st.lists(st.sampled_from(_PIECES), max_size=120).map("".join), st.text(max_size=60))


@settings(max_examples=300, deadline=None)
@given(
    text=_TEXTS,
    strategy=st.sampled_from(STRATEGIES),
    size=st.integers(1, 12),
    overlap_ratio=st.floats(0, 0.99),
)
def test_every_chunker_keeps_exact_offsets_and_covers_every_token(
    text: str, strategy: str, size: int, overlap_ratio: float
) -> None:
    doc = Document("doc", "t", text, "T")
    overlap = int(size * overlap_ratio)
    chunker = make_chunker(strategy, size, overlap)
    chunks = chunker.chunk(doc)
    assert chunks, "every document yields at least one chunk"
    assert chunks == chunker.chunk(doc), "chunking is deterministic"
    expected_ids = ["doc"] if strategy == "whole" else [f"doc#{n}" for n in range(len(chunks))]
    assert [c.chunk_id for c in chunks] == expected_ids
    for chunk in chunks:
        assert chunk.doc_id == "doc"
        assert 0 <= chunk.start <= chunk.end <= len(text)
        assert text[chunk.start : chunk.end] == chunk.text
        if strategy != "whole":
            assert count_tokens(chunk.text) <= size
    assert [c.start for c in chunks] == sorted(c.start for c in chunks)
    tokens = [m.span() for m in re.finditer(r"\w+|[^\w\s]", text)]
    for start, end in tokens:
        assert any(c.start <= start and end <= c.end for c in chunks), f"token {text[start:end]!r} lost"
    if strategy == "fixed" and tokens:
        stride = size - overlap
        assert len(chunks) == 1 + max(0, -(-(len(tokens) - size) // stride))
        assert [c.start for c in chunks] == [tokens[i][0] for i in range(0, len(tokens), stride)][
            : len(chunks)
        ]


def test_the_example_in_docs_corpus_md() -> None:
    text = (
        "# Refunds\n\nCustomers may request a refund within 30 days. Refunds go to the original payment method."
        "\n\n# Exceptions\n\nGift cards are final."
    )
    doc = Document("refund-policy", "acme", text)
    spans = {
        strategy: [(c.chunk_id, c.start, c.end) for c in make_chunker(strategy, size, overlap).chunk(doc)]
        for strategy, size, overlap in (("fixed", 12, 4), ("sentence", 12, 0), ("recursive", 12, 0))
    }
    assert spans == {
        "fixed": [("refund-policy#0", 0, 65), ("refund-policy#1", 49, 103), ("refund-policy#2", 85, 137)],
        "sentence": [("refund-policy#0", 0, 57), ("refund-policy#1", 58, 114), ("refund-policy#2", 116, 137)],
        "recursive": [
            ("refund-policy#0", 0, 57),
            ("refund-policy#1", 58, 100),
            ("refund-policy#2", 102, 137),
        ],
    }
