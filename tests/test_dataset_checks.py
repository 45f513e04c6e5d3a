"""Dataset checks that keep a wrong label from passing silently (issue 10, item 5, data half).

``validate --corpus`` checks tenants and label ownership; ``eval`` warns on stderr about labelled ids
the corpus lacks and pairs judged twice, and refuses a dataset with no answerable case (exit 2 and
the fix) instead of printing ``nan`` means with exit 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import KB, write_lines
from ragaudit.cli.main import main
from ragaudit.data.validate import closest_tenant, validate_dataset

CORPUS = [
    {"doc_id": "acme-pricing", "tenant_id": "acme", "text": "acme prices"},
    {"doc_id": "acme-faq", "tenant_id": "acme", "text": "acme faq"},
    {"doc_id": "globex-pricing", "tenant_id": "globex", "text": "globex prices"},
]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return write_lines(tmp_path / "corpus.jsonl", [json.dumps(d) for d in CORPUS])


def golden(tmp_path: Path, cases: list[dict[str, object]]) -> Path:
    return write_lines(tmp_path / "golden.jsonl", [json.dumps({"query": "q", **c}) for c in cases])


def test_a_tenant_that_is_not_a_corpus_tenant_is_an_error_naming_the_closest(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = golden(
        tmp_path,
        [
            {"id": "ok", "tenant_id": "acme", "relevant_chunk_ids": ["acme-pricing"]},
            {"id": "spaced", "tenant_id": "ACME ", "relevant_chunk_ids": ["acme-pricing"]},
            {"id": "typo", "tenant_id": "globx", "relevant_chunk_ids": ["globex-pricing"]},
        ],
    )
    problems = validate_dataset(path, corpus)
    assert [(p.line, p.severity) for p in problems] == [(2, "error"), (3, "error")]
    assert "tenant_id 'ACME ' is not a corpus tenant" in problems[0].message
    assert problems[0].fix == 'write "tenant_id": "acme"'
    assert problems[1].fix == 'write "tenant_id": "globex"'
    assert main(["validate", str(path), "--corpus", str(corpus)]) == 1
    assert f"{path}:2" in capsys.readouterr().out


def test_a_case_labelled_with_another_tenants_chunk_is_an_error(tmp_path: Path, corpus: Path) -> None:
    path = golden(
        tmp_path,
        [
            {"id": "leaky", "tenant_id": "acme", "relevant_chunk_ids": ["acme-faq", "globex-pricing#2"]},
            {"id": "graded", "tenant_id": "globex", "relevance": {"globex-pricing": 2, "acme-faq": 0}},
        ],
    )
    problems = validate_dataset(path, corpus)
    assert [p.line for p in problems] == [1, 2]
    assert "labelled with 1 id(s) of another tenant: 'globex-pricing#2' (first belongs to 'globex')" in (
        problems[0].message
    )
    assert "'acme-faq'" in problems[1].message


def test_the_demo_kb_and_tenantless_corpora_stay_clean(tmp_path: Path) -> None:
    assert validate_dataset(KB / "golden.jsonl", KB / "corpus.jsonl") == []
    beir_corpus = write_lines(tmp_path / "c.jsonl", [json.dumps({"_id": "d1", "text": "x"})])
    path = golden(tmp_path, [{"id": "a", "tenant_id": "anyone", "relevant_chunk_ids": ["d1"]}])
    assert validate_dataset(path, beir_corpus) == []


def test_closest_tenant_forgives_case_spaces_and_typos() -> None:
    assert closest_tenant(" Acme", {"acme", "globex"}) == "acme"
    assert closest_tenant("zzz", {"acme", "globex"}) is None


def test_eval_warns_about_ids_not_in_the_corpus(
    tmp_path: Path, corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = golden(
        tmp_path,
        [
            {"id": "a", "tenant_id": "acme", "relevant_chunk_ids": ["acme-pricing", "ghost-1"]},
            {"id": "b", "tenant_id": "acme", "relevant_chunk_ids": ["ghost-2"]},
        ],
    )
    run = write_lines(tmp_path / "run.trec", ["a Q0 acme-pricing 1 1.0 t", "b Q0 acme-faq 1 1.0 t"])
    code = main(["eval", "--dataset", str(path), "--run", str(run), "--corpus", str(corpus), "--no-history"])
    err = capsys.readouterr().err
    assert code == 0
    assert "warning: 2 labelled id(s) in 2 case(s) are not in the corpus" in err
    assert "'ghost-1', 'ghost-2'" in err


def test_eval_warns_about_pairs_judged_twice_and_says_which_grade_was_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    qrels = write_lines(tmp_path / "qrels", ["q1 0 d1 2", "q1 0 d2 0", "q1 0 d1 0", "q1 0 d2 0", "q1 0 d3 1"])
    run = write_lines(tmp_path / "run.trec", ["q1 Q0 d1 1 2.0 t", "q1 Q0 d3 2 1.0 t"])
    for fast in ("off", "on"):
        argv = ["eval", "--dataset", str(qrels), "--run", str(run), "--fast", fast, "--metrics", "MRR"]
        code = main([*argv, "--no-history"])
        captured = capsys.readouterr()
        assert code == 0, fast
        assert "0.5" in captured.out, "d1's last grade (0) is the one used"
        assert "warning: " in captured.err and "2 repeated (query, doc) judgment(s)" in captured.err
        assert "the last line's grade is kept: line 3: q1 d1 (2 then 0)" in captured.err


@pytest.mark.parametrize("fast", ["off", "on"])
def test_no_answerable_case_exits_2_with_the_reason_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fast: str
) -> None:
    qrels = write_lines(tmp_path / "qrels", ["q1 0 d1 1", "q2 0 d2 2"])
    run = write_lines(tmp_path / "run.trec", ["q1 Q0 d1 1 1.0 t", "q2 Q0 d2 1 1.0 t"])
    argv = ["eval", "--dataset", str(qrels), "--run", str(run), "--fast", fast, "--no-history"]
    assert main([*argv, "--relevance-threshold", "3"]) == 2
    captured = capsys.readouterr()
    assert "nan" not in captured.out
    assert "no judged item has grade >= 3 (the highest grade is 2)" in captured.err
    assert "lower --relevance-threshold to 2" in captured.err


def test_beir_qrels_pairs_judged_twice_are_noted_with_the_kept_grade(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "beir"
    (folder / "qrels").mkdir(parents=True)
    write_lines(folder / "queries.jsonl", [json.dumps({"_id": "q1", "text": "refunds"})])
    write_lines(
        folder / "qrels" / "test.tsv", ["query-id\tcorpus-id\tscore", "q1\td1\t0", "q1\td2\t1", "q1\td1\t2"]
    )
    run = write_lines(tmp_path / "run.trec", ["q1 Q0 d1 1 2.0 t"])
    assert (
        main(["eval", "--dataset", str(folder), "--run", str(run), "--metrics", "MRR", "--no-history"]) == 0
    )
    captured = capsys.readouterr()
    assert "1 repeated (query, doc) judgment(s); the last line's grade is kept: line 4: q1 d1 (0 then 2)" in (
        captured.err
    )
    assert "1.0000" in captured.out  # d1's kept grade (2) is relevant


def span(doc_id: str, start: int, end: int) -> dict[str, object]:
    return {"doc_id": doc_id, "start": start, "end": end}


def test_an_evidence_span_outside_its_document_is_an_error(tmp_path: Path, corpus: Path) -> None:
    """A span past the end of the document's text can never overlap a chunk: its grade is lost."""
    path = golden(
        tmp_path,
        [
            {
                "id": "inside",
                "tenant_id": "acme",
                "relevant_chunk_ids": ["acme-faq"],
                "evidence": [span("acme-faq", 0, 8)],
            },
            {
                "id": "past",
                "tenant_id": "acme",
                "relevant_chunk_ids": ["acme-faq"],
                "evidence": [span("acme-faq", 4, 40)],
            },
            {
                "id": "after",
                "tenant_id": "acme",
                "relevant_chunk_ids": ["acme-pricing"],
                "evidence": [span("acme-faq", 0, 8), span("acme-pricing", 50, 60)],
            },
        ],
    )
    problems = validate_dataset(path, corpus)
    assert [(p.line, p.severity) for p in problems] == [(2, "error"), (3, "error")]
    assert "evidence[0] [4, 40) of 'acme-faq' ends past its text (8 characters)" in problems[0].message
    assert "evidence[1] [50, 60) of 'acme-pricing' ends past its text (11 characters)" in problems[1].message


def test_a_corpus_that_does_not_exist_is_an_input_error_not_a_clean_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = golden(tmp_path, [{"id": "a", "tenant_id": "acme", "relevant_chunk_ids": ["nowhere"]}])
    assert main(["validate", str(path), "--corpus", str(tmp_path / "missing.jsonl")]) == 2
    captured = capsys.readouterr()
    assert "0 error(s)" not in captured.out and "missing.jsonl" in captured.err


def test_a_dataset_with_no_answerable_case_is_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every case an unanswerable probe: valid, but no ranking metric can be scored on it."""
    path = golden(tmp_path, [{"id": "u1", "relevant_chunk_ids": []}, {"id": "u2", "relevance": {"d": 0}}])
    problems = validate_dataset(path)
    assert [p.severity for p in problems] == ["warning"]
    assert "no case is answerable (2 cases, none with an item graded >= 1)" in problems[0].message
    assert main(["validate", str(path)]) == 0
    assert "0 error(s), 1 warning(s)" in capsys.readouterr().out


def test_validate_reports_the_corpus_own_problems_not_only_the_labels_against_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``validate golden --corpus C`` read C's ids leniently: a corpus ``eval --corpus`` refuses (no
    tenant, a duplicate id, an invalid status) went unmentioned. Its problems now come first, as the
    corpus loader words them (docs/corpus.md, "Problems")."""
    bad = write_lines(
        tmp_path / "corpus.jsonl",
        [
            json.dumps({"doc_id": "faq", "tenant_id": "acme", "text": "faq"}),
            json.dumps({"doc_id": "lost", "text": "no tenant"}),
            json.dumps({"doc_id": "faq", "tenant_id": "acme", "text": "again"}),
            json.dumps(
                {"doc_id": "old", "tenant_id": "acme", "text": "x", "metadata": {"status": "retired"}}
            ),
        ],
    )
    golden = write_lines(
        tmp_path / "golden.jsonl",
        [json.dumps({"id": "q", "query": "faq?", "tenant_id": "acme", "relevant_chunk_ids": ["faq"]})],
    )
    assert main(["validate", str(golden), "--corpus", str(bad)]) == 1
    out = capsys.readouterr().out
    assert f"error: {bad}:2: missing field 'tenant_id'" in out
    assert f"error: {bad}:3: duplicate doc id 'faq' (first on line 1)" in out
    assert f"error: {bad}:4: metadata.status must be one of active, superseded (got 'retired')" in out
    assert f"{golden} and {bad}: 3 error(s), 0 warning(s)" in out
    assert main(["validate", str(KB / "golden.jsonl"), "--corpus", str(KB / "corpus.jsonl")]) == 0


def test_validate_without_a_corpus_says_what_it_did_not_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before: "0 error(s), 0 warning(s)" alone, as if a golden set labelled with another tenant's (or
    no existing) documents were clean; the ids are checked only against a corpus."""
    path = golden(tmp_path, [{"id": "q1", "relevance": {"globex-secret": 1}}])
    assert main(["validate", str(path)]) == 0
    out = capsys.readouterr().out
    assert "0 error(s), 0 warning(s)" in out and "not checked: the ids against a corpus" in out
    corpus = tmp_path / "corpus.jsonl"
    corpus.write_text('{"doc_id": "globex-secret", "tenant_id": "globex", "text": "x"}\n', encoding="utf-8")
    main(["validate", str(path), "--corpus", str(corpus)])
    assert "not checked" not in capsys.readouterr().out


def test_validate_of_a_run_file_says_what_it_did_not_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A run file has no labels and no tenants: its "not checked" lines name its own checks, the result
    ids against --corpus and the case ids against --dataset, each gone once its input is given."""
    run = tmp_path / "run.trec"
    run.write_text("q1 Q0 acme-pricing 1 2.0 bm25\n", encoding="utf-8")
    assert main(["validate", str(run)]) == 0
    out = capsys.readouterr().out
    assert "not checked: the result ids against a corpus" in out and "(pass --corpus)" in out
    assert "not checked: the case ids against a dataset" in out and "(pass --dataset)" in out
    assert "labelled" not in out
    path = golden(tmp_path, [{"id": "q1", "relevance": {"acme-pricing": 1}}])
    main(["validate", str(run), "--dataset", str(path), "--corpus", str(KB / "corpus.jsonl")])
    assert "not checked" not in capsys.readouterr().out
