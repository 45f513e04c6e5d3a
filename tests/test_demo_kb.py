"""The demo knowledge base shipped as package data: counts, label integrity, isolation canaries, determinism."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from importlib.resources import as_file, files
from pathlib import Path
from typing import Any

import pytest

from label_fixtures import load_build_demo_kb
from ragaudit.data.golden_jsonl import read_golden_jsonl
from ragaudit.data.schema import GoldenCase

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "build_demo_kb.py"
KB_FILES = ("corpus.jsonl", "golden.jsonl", "canaries.jsonl")


@pytest.fixture(scope="module")
def kb_dir() -> Iterator[Path]:
    """The installed ``ragaudit/demo_data/kb`` folder as a real path."""
    with ExitStack() as stack:
        yield stack.enter_context(as_file(files("ragaudit") / "demo_data" / "kb"))


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def corpus(kb_dir: Path) -> dict[str, dict[str, Any]]:
    return {doc["doc_id"]: doc for doc in _read_jsonl(kb_dir / "corpus.jsonl")}


@pytest.fixture(scope="module")
def cases(kb_dir: Path) -> list[GoldenCase]:
    loaded, problems = read_golden_jsonl(kb_dir / "golden.jsonl")
    assert problems == []
    return loaded


def test_sizes_meet_the_demo_requirements(corpus: dict[str, dict[str, Any]], cases: list[GoldenCase]) -> None:
    tenants = {doc["tenant_id"] for doc in corpus.values()}
    assert len(tenants) >= 3
    assert len(corpus) >= 80
    assert len(cases) >= 60
    assert sum(1 for c in cases if not c.is_answerable()) >= 8
    assert {c.tenant_id for c in cases} == tenants


def test_documents_have_the_corpus_fields(corpus: dict[str, dict[str, Any]]) -> None:
    for doc_id, doc in corpus.items():
        meta = doc["metadata"]
        assert doc_id.startswith(f"{doc['tenant_id']}-")
        assert doc["title"] and doc["text"].strip()
        assert 60 <= sum(1 for word in doc["text"].split() if word != "##") <= 300, doc_id
        assert meta["status"] in {"active", "superseded"}
        assert meta["doc_type"] in {"pricing", "policy", "security", "faq", "marketing", "contract"}
        assert isinstance(meta["version"], int)
        assert len(meta["effective_date"]) == 10


def test_every_source_has_exactly_one_active_version(corpus: dict[str, dict[str, Any]]) -> None:
    by_source: dict[str, list[dict[str, Any]]] = {}
    for doc in corpus.values():
        by_source.setdefault(doc["metadata"]["source_id"], []).append(doc)
    for source_id, versions in by_source.items():
        active = [d for d in versions if d["metadata"]["status"] == "active"]
        assert len(active) == 1, source_id
        assert active[0]["metadata"]["version"] == max(d["metadata"]["version"] for d in versions)
        assert len({d["tenant_id"] for d in versions}) == 1
    assert sum(1 for d in corpus.values() if d["metadata"]["status"] == "superseded") >= 6


def test_labels_exist_and_belong_to_the_case_tenant(
    corpus: dict[str, dict[str, Any]], cases: list[GoldenCase]
) -> None:
    for case in cases:
        labelled = (
            set(case.relevance) | set(case.relevant_chunk_ids or ()) | {e.doc_id for e in case.evidence}
        )
        for doc_id in labelled:
            assert doc_id in corpus, (case.id, doc_id)
            assert corpus[doc_id]["tenant_id"] == case.tenant_id, (case.id, doc_id)


def test_superseded_versions_are_graded_zero_and_never_relevant(
    corpus: dict[str, dict[str, Any]], cases: list[GoldenCase]
) -> None:
    traps = 0
    for case in cases:
        for doc_id in case.relevant_chunk_ids or ():
            assert corpus[doc_id]["metadata"]["status"] == "active", (case.id, doc_id)
        for doc_id, grade in case.relevance.items():
            if corpus[doc_id]["metadata"]["status"] == "superseded":
                assert grade == 0, (case.id, doc_id)
                traps += 1
        # a trap: an older version of a relevant document is judged
        assert ("superseded-trap" in case.tags) == any(
            corpus[d]["metadata"].get("superseded_by") in (case.relevant_chunk_ids or ())
            for d in case.relevance
        ), case.id
    assert traps >= 10


def test_every_case_judges_every_document_of_its_tenant(
    corpus: dict[str, dict[str, Any]], cases: list[GoldenCase]
) -> None:
    """Complete judgments (pooled at depth 20, then the rest): Judged@k is 1 for any ranking of the tenant."""
    for case in cases:
        tenant_docs = {doc_id for doc_id, doc in corpus.items() if doc["tenant_id"] == case.tenant_id}
        assert set(case.relevance) == tenant_docs, case.id
        assert set(case.relevant_chunk_ids or ()) == {d for d, g in case.relevance.items() if g >= 2}, case.id


def test_evidence_spans_lie_inside_their_documents(
    corpus: dict[str, dict[str, Any]], cases: list[GoldenCase]
) -> None:
    for case in cases:
        for span in case.evidence:
            text = corpus[span.doc_id]["text"]
            assert 0 <= span.start < span.end <= len(text), case.id
            assert text[span.start : span.end].strip(), case.id
            assert span.doc_id in (case.relevant_chunk_ids or ())
        for doc_id in case.relevant_chunk_ids or ():
            assert any(e.doc_id == doc_id for e in case.evidence), (case.id, doc_id)


def test_answerable_cases_have_answers_and_probes_have_nothing(cases: list[GoldenCase]) -> None:
    for case in cases:
        if case.is_answerable():
            assert case.answer, case.id
        else:
            assert "unanswerable" in case.tags
            assert case.evidence == () and case.answer is None
            assert all(grade == 0 for grade in case.relevance.values())


def test_the_set_exercises_hard_query_kinds(cases: list[GoldenCase]) -> None:
    tags = [tag for case in cases for tag in case.tags]
    for tag in ("colloquial", "misspelled", "multi-source", "superseded-trap", "confidential"):
        assert tags.count(tag) >= 5, tag
    assert any(max(c.relevance.values(), default=0) == 3 and 1 in c.relevance.values() for c in cases)
    assert any({"contract", "multi-source"} <= set(c.tags) for c in cases), (
        "no case with a contract and a second valid source"
    )


def test_shared_questions_get_a_different_answer_in_every_tenant(cases: list[GoldenCase]) -> None:
    answers: dict[str, dict[str | None, str | None]] = {}
    for case in cases:
        if case.is_answerable():
            answers.setdefault(case.query, {})[case.tenant_id] = case.answer
    for query in ("pro plan api limit how much?", "What are the confidential severance clauses?"):
        per_tenant = answers[query]
        assert len(per_tenant) >= 3, query
        assert len(set(per_tenant.values())) == len(per_tenant), query


def test_canaries_appear_only_in_their_own_document(kb_dir: Path, corpus: dict[str, dict[str, Any]]) -> None:
    canaries = _read_jsonl(kb_dir / "canaries.jsonl")
    per_tenant: dict[str, int] = {}
    for canary in canaries:
        owner = corpus[canary["doc_id"]]
        assert owner["tenant_id"] == canary["tenant_id"]
        assert owner["metadata"]["doc_type"] == "contract"
        assert canary["secret"] in owner["text"]
        for doc in corpus.values():
            if doc["tenant_id"] != canary["tenant_id"]:
                assert canary["secret"] not in doc["text"], (canary["secret"], doc["doc_id"])
        per_tenant[canary["tenant_id"]] = per_tenant.get(canary["tenant_id"], 0) + 1
    tenants = {doc["tenant_id"] for doc in corpus.values()}
    assert set(per_tenant) == tenants
    assert min(per_tenant.values()) >= 2


def test_generator_rewrites_the_shipped_files_byte_for_byte(kb_dir: Path, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    for name in KB_FILES:
        assert (tmp_path / name).read_bytes() == (kb_dir / name).read_bytes(), name


def test_generator_reports_a_misquoted_span_and_a_foreign_label() -> None:
    kb = load_build_demo_kb()
    docs = {doc.doc_id: doc for doc in kb.DOCS}
    bad = kb.Case(
        "acme-bad-001",
        "acme",
        "q",
        {"pricing-professional-v3": 3, "pricing-professional-v2": 2},
        [("pricing-professional-v3", "The Professional plan includes 25,000 API calls per month")],
        "a",
    )
    problems: list[str] = []
    kb.golden_record(bad, docs, {"acme-pricing-professional-v2"}, problems)
    assert any("span not found" in p for p in problems)
    assert any("superseded 'acme-pricing-professional-v2' must be graded 0" in p for p in problems)
    foreign = kb.Case("acme-bad-002", "acme", "q", {"pricing-scale-v2": 3}, [], "a")
    problems = []
    kb.golden_record(foreign, docs, set(), problems)
    assert any("not a document of tenant 'acme'" in p for p in problems)


def test_generator_checks_pooled_grades_and_completes_the_judgments() -> None:
    kb = load_build_demo_kb()
    docs = {doc.doc_id: doc for doc in kb.DOCS}
    superseded = {"acme-pricing-professional-v2"}
    case = kb.Case(
        "acme-ok-001",
        "acme",
        "q",
        {"pricing-professional-v3": 3},
        [("pricing-professional-v3", "The Professional plan includes 50,000 API calls per month")],
        "a",
    )
    problems: list[str] = []
    record = kb.golden_record(
        case, docs, superseded, problems, pooled={"faq-api": 1, "pricing-professional-v2": 0}, complete=True
    )
    assert problems == []
    assert record["relevant_chunk_ids"] == ["acme-pricing-professional-v3"]
    relevance = record["relevance"]
    assert list(relevance)[:3] == [
        "acme-pricing-professional-v3",
        "acme-faq-api",
        "acme-pricing-professional-v2",
    ]
    assert set(relevance) == {d for d, doc in docs.items() if doc.tenant == "acme"}
    assert sum(1 for g in relevance.values() if g) == 2
    assert "superseded-trap" in record["tags"]  # the old version of the relevant page is judged
    problems = []
    kb.golden_record(
        case,
        docs,
        superseded,
        problems,
        pooled={"faq-billing": 2, "pricing-professional-v3": 1, "pricing-scale-v2": 1},
    )
    assert any("pooled grade 2 of 'acme-faq-billing'" in p for p in problems)
    assert any("'acme-pricing-professional-v3' is already graded by the case" in p for p in problems)
    assert any(
        "pooled label 'acme-pricing-scale-v2' is not a document of tenant 'acme'" in p for p in problems
    )
    problems = []
    record = kb.golden_record(case, docs, set(), problems, pooled={"faq-api": 1})
    assert len(record["relevance"]) == 2 and "superseded-trap" not in record["tags"]
