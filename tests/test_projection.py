"""Projection of labels onto chunks, split spans, and token-level overlap against evidence."""

from __future__ import annotations

import math
from pathlib import Path
from types import MappingProxyType

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragaudit.corpus.chunkers import chunk_corpus, make_chunker
from ragaudit.corpus.loading import load_corpus
from ragaudit.corpus.model import Chunk, Document
from ragaudit.corpus.projection import (
    group_by_doc,
    merge_intervals,
    project_case,
    project_cases,
    span_split_count,
    token_overlap,
)
from ragaudit.data.beir import load_beir
from ragaudit.data.schema import Evidence, GoldenCase

#                 0         1         2         3
#                 0123456789012345678901234567890123456
PRICING = Document("pricing", "acme", "Starter 10k calls. Pro 50k calls. Max.")
OLD = Document("pricing-old", "acme", "Pro 20k calls. Old.")
CHUNKS = [c for d in (PRICING, OLD) for c in make_chunker("sentence", 4, 0).chunk(d)]
BY_DOC = group_by_doc(CHUNKS)


def _case(
    relevant: tuple[str, ...] | None,
    relevance: dict[str, int] | None = None,
    evidence: tuple[Evidence, ...] = (),
) -> GoldenCase:
    return GoldenCase(
        "q1", "pro limit?", relevant, MappingProxyType(relevance or {}), "acme", evidence, "50k", ("t",), 3
    )


def test_fixture_chunks_are_sentences() -> None:
    assert [(c.chunk_id, c.start, c.end, c.text) for c in CHUNKS] == [
        ("pricing#0", 0, 18, "Starter 10k calls."),
        ("pricing#1", 19, 33, "Pro 50k calls."),
        ("pricing#2", 34, 38, "Max."),
        ("pricing-old#0", 0, 14, "Pro 20k calls."),
        ("pricing-old#1", 15, 19, "Old."),
    ]


def test_evidence_spans_pick_the_overlapping_chunks_with_their_max_grade() -> None:
    evidence = (
        Evidence("pricing", 19, 26, 3),  # inside pricing#1
        Evidence("pricing", 10, 22, None),  # straddles pricing#0 and pricing#1, default grade 1
    )
    case = _case(("pricing-v3-old-chunking",), {"pricing-v3-old-chunking": 3, "pricing-old": 0}, evidence)
    projected = project_case(case, BY_DOC)
    assert projected.relevant_chunk_ids == ("pricing#0", "pricing#1")
    assert dict(projected.relevance) == {
        "pricing#0": 1,
        "pricing#1": 3,
        "pricing-old#0": 0,
        "pricing-old#1": 0,
    }
    assert (
        projected.id,
        projected.query,
        projected.tenant_id,
        projected.answer,
        projected.tags,
        projected.line,
    ) == (
        "q1",
        "pro limit?",
        "acme",
        "50k",
        ("t",),
        3,
    )
    assert projected.evidence == evidence
    assert project_case(case, BY_DOC, threshold=2).relevant_chunk_ids == ("pricing#1",)


def test_span_touching_a_chunk_boundary_does_not_overlap_it() -> None:
    projected = project_case(_case(None, evidence=(Evidence("pricing", 18, 19),)), BY_DOC)
    assert projected.relevant_chunk_ids == ()
    assert dict(projected.relevance) == {}


def test_evidence_in_a_document_without_chunks_keeps_its_doc_id_as_a_miss() -> None:
    projected = project_case(_case(None, evidence=(Evidence("unknown-doc", 0, 5, 2),)), BY_DOC)
    assert projected.relevant_chunk_ids == ("unknown-doc",)
    assert dict(projected.relevance) == {"unknown-doc": 2}


def test_document_labels_expand_to_all_their_chunks() -> None:
    case = _case(("pricing",), {"pricing": 3, "pricing-old": 0})
    projected = project_case(case, BY_DOC)
    assert projected.relevant_chunk_ids == ("pricing#0", "pricing#1", "pricing#2")
    assert dict(projected.relevance) == {
        "pricing#0": 3,
        "pricing#1": 3,
        "pricing#2": 3,
        "pricing-old#0": 0,
        "pricing-old#1": 0,
    }


def test_chunk_ids_and_unknown_ids_stay_and_grades_take_the_max() -> None:
    case = _case(("pricing#1", "pricing", "ghost"), {"pricing#1": 3, "pricing": 1, "ghost": 2})
    projected = project_case(case, BY_DOC)
    assert projected.relevant_chunk_ids == ("pricing#1", "pricing#0", "pricing#2", "ghost")
    assert dict(projected.relevance) == {"pricing#1": 3, "pricing#0": 1, "pricing#2": 1, "ghost": 2}


def test_grade_only_cases_stay_grade_only() -> None:
    projected = project_case(_case(None, {"pricing-old": 2}), BY_DOC)
    assert projected.relevant_chunk_ids is None
    assert projected.relevant_set(threshold=2) == {"pricing-old#0", "pricing-old#1"}


def test_unanswerable_cases_stay_unanswerable() -> None:
    for case in (
        _case((), {"pricing-old": 0}),
        _case((), evidence=(Evidence("pricing", 0, 5, 3),)),
    ):
        projected = project_case(case, BY_DOC)
        assert projected.relevant_chunk_ids == ()
        assert not projected.is_answerable()
    assert dict(project_case(_case((), {"pricing-old": 0}), BY_DOC).relevance) == {
        "pricing-old#0": 0,
        "pricing-old#1": 0,
    }


def test_whole_document_chunking_leaves_document_labels_unchanged() -> None:
    whole = group_by_doc(c for d in (PRICING, OLD) for c in make_chunker("whole").chunk(d))
    projected = project_case(_case(("pricing",), {"pricing": 3, "pricing-old": 0}), whole)
    assert projected.relevant_chunk_ids == ("pricing",)
    assert dict(projected.relevance) == {"pricing": 3, "pricing-old": 0}


def test_project_cases_groups_chunks_once() -> None:
    [projected] = project_cases([_case(("pricing-old",))], CHUNKS)
    assert projected.relevant_chunk_ids == ("pricing-old#0", "pricing-old#1")


def test_span_split_count() -> None:
    evidence = (
        Evidence("pricing", 19, 26),  # inside one chunk
        Evidence("pricing", 10, 22),  # across pricing#0 / pricing#1
        Evidence("pricing", 0, 38),  # across all three
        Evidence("elsewhere", 0, 5),  # no chunks: not counted
    )
    assert span_split_count(_case(None, evidence=evidence), BY_DOC) == 2
    overlapping = group_by_doc(make_chunker("fixed", 4, 2).chunk(PRICING))
    # fixed windows with overlap: "calls. Pro" lies wholly inside the window "calls. Pro 50k".
    assert span_split_count(_case(None, evidence=(Evidence("pricing", 12, 22),)), overlapping) == 0


def _chunk(doc_id: str, start: int, end: int) -> Chunk:
    return Chunk(f"{doc_id}@{start}", doc_id, "t", start, end, "x" * (end - start))


def test_token_overlap_formulas() -> None:
    retrieved = [_chunk("a", 0, 10), _chunk("a", 5, 15), _chunk("b", 0, 10)]  # |R| = 15 + 10 = 25
    evidence = [
        Evidence("a", 10, 30, 3),
        Evidence("a", 12, 20),
        Evidence("c", 0, 5),
        Evidence("b", 0, 100, 0),
    ]
    result = token_overlap(retrieved, evidence)  # |E| = 20 + 5 = 25 (the grade-0 span is not evidence)
    assert (result.retrieved, result.evidence, result.overlap) == (25, 25, 5)
    assert result.precision == pytest.approx(5 / 25)
    assert result.recall == pytest.approx(5 / 25)
    assert result.iou == pytest.approx(5 / 45)


def test_token_overlap_edge_cases() -> None:
    nothing = token_overlap([], [Evidence("a", 0, 4)])
    assert (nothing.precision, nothing.recall, nothing.iou) == (0.0, 0.0, 0.0)
    no_evidence = token_overlap([_chunk("a", 0, 4)], [])
    assert no_evidence.precision == 0.0 and math.isnan(no_evidence.recall) and no_evidence.iou == 0.0
    empty = token_overlap([], [])
    assert empty.precision == 0.0 and math.isnan(empty.recall) and math.isnan(empty.iou)
    perfect = token_overlap([_chunk("a", 0, 4), _chunk("a", 4, 8)], [Evidence("a", 0, 8)])
    assert (perfect.precision, perfect.recall, perfect.iou) == (1.0, 1.0, 1.0)


def test_merge_intervals() -> None:
    assert merge_intervals([(5, 8), (0, 2), (2, 4), (7, 10), (3, 3)]) == [(0, 4), (5, 10)]


_INTERVAL = st.tuples(st.sampled_from("ab"), st.integers(0, 30), st.integers(0, 30)).map(
    lambda t: (t[0], min(t[1], t[2]), max(t[1], t[2]))
)


@settings(max_examples=200, deadline=None)
@given(retrieved=st.lists(_INTERVAL, max_size=6), evidence=st.lists(_INTERVAL, max_size=6))
def test_token_overlap_matches_counting_characters(
    retrieved: list[tuple[str, int, int]], evidence: list[tuple[str, int, int]]
) -> None:
    got = {(d, i) for d, a, b in retrieved for i in range(a, b)}
    wanted = {(d, i) for d, a, b in evidence if a < b for i in range(a, b)}
    spans = [Evidence(d, a, b) for d, a, b in evidence if a < b]
    result = token_overlap([_chunk(d, a, b) for d, a, b in retrieved], spans)
    assert (result.retrieved, result.evidence, result.overlap) == (len(got), len(wanted), len(got & wanted))
    if got | wanted:
        assert result.iou == pytest.approx(len(got & wanted) / len(got | wanted))


@pytest.mark.beir
def test_real_beir_labels_project_onto_chunks(beir_root: Path) -> None:
    folder = beir_root / "business-reports"
    if not (folder / "corpus.jsonl").is_file():
        pytest.skip(f"{folder} has no corpus.jsonl")
    corpus = load_corpus(folder)
    dataset = load_beir(folder, doc_lengths={d.doc_id: len(d.text) for d in corpus.documents})
    whole = group_by_doc(chunk_corpus(corpus, make_chunker("whole")))
    small = group_by_doc(chunk_corpus(corpus, make_chunker("recursive", 64, 0)))
    for case in dataset.cases:
        assert project_case(case, whole).relevant_set() == case.relevant_set()
        projected = project_case(case, small)
        assert projected.is_answerable() == case.is_answerable()
        assert {cid.rpartition("#")[0] for cid in projected.relevant_set()} == case.relevant_set()
        assert span_split_count(case, whole) == 0
