"""Corpus loading: ragaudit JSONL and BEIR, format detection, every problem with file:line and a fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_lines
from ragaudit.artifacts.provenance import sha256_of
from ragaudit.corpus.loading import detect_corpus_format, load_corpus, read_corpus
from ragaudit.data.beir import DEFAULT_TENANT
from ragaudit.errors import InputError, ValidationError


def _jsonl(path: Path, records: list[object]) -> Path:
    return write_lines(path, [json.dumps(r) for r in records])


def _problems(path: Path) -> list[str]:
    with pytest.raises(ValidationError) as info:
        load_corpus(path)
    return [str(p) for p in info.value.problems]


def test_ragaudit_jsonl_loads_documents_with_metadata(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "corpus.jsonl",
        [
            {
                "doc_id": "pricing-v3",
                "tenant_id": "acme",
                "title": "Pricing",
                "text": "Professional: 50,000 calls.",
                "metadata": {
                    "version": 3,
                    "status": "active",
                    "source_id": "pricing",
                    "effective_date": "2025-01-31",
                },
            },
            {
                "doc_id": "pricing-v2",
                "tenant_id": "acme",
                "text": "Professional: 20,000 calls.",
                "metadata": {"status": "superseded", "source_id": "pricing"},
            },
            {"doc_id": "faq", "tenant_id": "globex", "text": "Refunds within 30 days."},
        ],
    )
    corpus = load_corpus(path)
    assert corpus.format == "jsonl"
    assert [d.doc_id for d in corpus.documents] == ["pricing-v3", "pricing-v2", "faq"]
    assert corpus.tenants == ("acme", "globex")
    assert corpus.by_id["pricing-v2"].status == "superseded"
    assert corpus.by_id["pricing-v3"].source_id == "pricing"
    assert corpus.by_id["faq"].title == ""
    assert corpus.by_id["faq"].source_id == "faq"
    assert corpus.sha256 == sha256_of(path)
    assert corpus.warnings == ()
    assert len(corpus) == 3
    with pytest.raises(TypeError):
        corpus.by_id["pricing-v3"].metadata["status"] = "superseded"  # type: ignore[index]


def test_beir_file_and_folder_are_detected_and_get_the_default_tenant(tmp_path: Path) -> None:
    folder = tmp_path / "beir"
    folder.mkdir()
    path = _jsonl(
        folder / "corpus.jsonl",
        [{"_id": "d1", "title": "One", "text": "First."}, {"_id": "d2", "text": "Second."}],
    )
    assert detect_corpus_format(path) == "beir"
    assert detect_corpus_format(folder) == "beir"
    for source in (path, folder):
        corpus = load_corpus(source)
        assert corpus.format == "beir"
        assert [(d.doc_id, d.tenant_id, d.title) for d in corpus.documents] == [
            ("d1", DEFAULT_TENANT, "One"),
            ("d2", DEFAULT_TENANT, ""),
        ]
        assert corpus.sha256 == sha256_of(path)


def test_folder_holding_a_ragaudit_corpus_is_read_as_ragaudit_jsonl(tmp_path: Path) -> None:
    _jsonl(tmp_path / "corpus.jsonl", [{"doc_id": "d1", "tenant_id": "acme", "text": "x"}])
    corpus = load_corpus(tmp_path)
    assert corpus.format == "jsonl"
    assert corpus.tenants == ("acme",)


def test_missing_tenant_says_to_add_it_or_use_beir(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "c.jsonl", [{"doc_id": "d1", "text": "x"}])
    [problem] = _problems(path)
    assert problem.startswith(f"{path}:1: missing field 'tenant_id'")
    assert 'add "tenant_id"' in problem and "BEIR format" in problem


def test_every_problem_is_collected_with_its_line(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "c.jsonl",
        [
            json.dumps({"doc_id": "a", "tenant_id": "t", "text": "ok"}),
            json.dumps({"doc_id": "a", "tenant_id": "t", "text": "again"}),
            json.dumps({"doc_id": 7, "tenant_id": "t", "text": "x"}),
            json.dumps({"doc_id": "b", "tenant_id": "t", "text": ["not", "a", "string"]}),
            json.dumps({"doc_id": "c", "tenant_id": "t"}),
            json.dumps({"doc_id": "d", "tenant_id": "t", "text": "x", "metadata": {"status": "retired"}}),
            json.dumps({"doc_id": "e", "tenant_id": "", "text": "x"}),
            "{not json",
            "[1, 2]",
            json.dumps(
                {"doc_id": "f", "tenant_id": "t", "text": "x", "metadata": {"effective_date": "31/01/2025"}}
            ),
            json.dumps({"doc_id": "g", "tenant_id": "t", "text": "x", "metadata": "v2"}),
        ],
    )
    problems = _problems(path)
    expected = [
        (2, "duplicate doc id 'a' (first on line 1)"),
        (3, "field 'doc_id' must be a non-empty string"),
        (4, "field 'text' must be a string"),
        (5, "missing field 'text'"),
        (6, "metadata.status must be one of active, superseded (got 'retired')"),
        (7, "field 'tenant_id' must be a non-empty string"),
        (8, "malformed JSON"),
        (9, "expected a JSON object, got list"),
        (10, "metadata.effective_date '31/01/2025' is not an ISO date"),
        (11, "'metadata' must be an object"),
    ]
    assert len(problems) == len(expected)
    for text, (line, message) in zip(problems, expected, strict=True):
        assert text.startswith(f"{path}:{line}: {message}"), text
        assert "(fix: " in text


def test_empty_text_is_a_warning_and_the_document_is_kept(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "c.jsonl",
        [
            {"doc_id": "a", "tenant_id": "t", "title": "Only a title", "text": ""},
            {"doc_id": "b", "tenant_id": "t", "text": "  ", "extra": 1},
        ],
    )
    corpus = load_corpus(path)
    assert [d.doc_id for d in corpus.documents] == ["a", "b"]
    messages = [str(w) for w in corpus.warnings]
    assert messages[0].startswith(
        f"{path}:1: warning: document 'a' has empty text: it is indexed by its title only"
    )
    assert messages[1].startswith(f"{path}:2: warning: unknown field(s) extra ignored")
    assert "has nothing to index" in messages[2]


def test_beir_record_problems_name_the_beir_fields(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "corpus.jsonl", [{"_id": "d1", "text": "x"}, {"_id": "d2"}, {"_id": "d1", "text": "y"}]
    )
    problems = _problems(path)
    assert problems[0].startswith(f"{path}:2: missing field 'text'")
    assert problems[1].startswith(f"{path}:3: duplicate doc id 'd1' (first on line 1)")


def test_invalid_utf8_and_empty_and_missing_inputs(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(b'{"doc_id": "a", "tenant_id": "t", "text": "ok"}\n{"doc_id": "\xff"}\n')
    assert _problems(bad)[0].startswith(f"{bad}:2: invalid UTF-8")
    empty = write_lines(tmp_path / "empty.jsonl", [])
    assert _problems(empty) == [f"{empty}: no documents found (fix: write one JSON document per line)"]
    with pytest.raises(InputError, match="corpus not found"):
        load_corpus(tmp_path / "absent.jsonl")
    (tmp_path / "folder").mkdir()
    with pytest.raises(InputError, match=r"folder has no corpus\.jsonl"):
        load_corpus(tmp_path / "folder")


def test_read_corpus_returns_good_documents_next_to_problems(tmp_path: Path) -> None:
    path = _jsonl(
        tmp_path / "c.jsonl", [{"doc_id": "a", "tenant_id": "t", "text": "x"}, {"doc_id": "b", "text": "y"}]
    )
    documents, problems, fmt = read_corpus(path)
    assert [d.doc_id for d in documents] == ["a"]
    assert [p.line for p in problems] == [2]
    assert fmt == "jsonl"


@pytest.mark.beir
def test_real_beir_folder_loads(beir_root: Path) -> None:
    folder = beir_root / "business-reports"
    if not (folder / "corpus.jsonl").is_file():
        pytest.skip(f"{folder} has no corpus.jsonl")
    corpus = load_corpus(folder)
    with (folder / "corpus.jsonl").open(encoding="utf-8") as handle:
        ids = [json.loads(line)["_id"] for line in handle if line.strip()]
    assert corpus.format == "beir"
    assert [d.doc_id for d in corpus.documents] == ids
    assert corpus.tenants == (DEFAULT_TENANT,)
    assert all(d.text for d in corpus.documents)
    assert corpus.sha256 == sha256_of(folder / "corpus.jsonl")
