"""TREC qrels / runs, JSONL runs and BEIR folders: formats, trec_eval order, errors with file:line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import write_lines
from ragaudit.data.beir import import_beir, load_beir
from ragaudit.data.loading import detect_dataset_format, load_dataset, load_run
from ragaudit.data.run_jsonl import load_jsonl_run
from ragaudit.data.trec import load_qrels, load_trec_run, read_qrels, read_trec_run, write_trec_run
from ragaudit.errors import InputError, ValidationError


def test_qrels_with_four_or_three_columns_and_header(tmp_path: Path) -> None:
    four = write_lines(tmp_path / "q4", ["q1 0 d1 2", "q1 0 d2 0", "q2 0 d3 1"])
    three = write_lines(
        tmp_path / "q3.tsv", ["query-id\tcorpus-id\tscore", "q1\td1\t2", "q1\td2\t0", "q2\td3\t1"]
    )
    assert load_qrels(four) == load_qrels(three) == {"q1": {"d1": 2, "d2": 0}, "q2": {"d3": 1}}


def test_qrels_problems_name_the_line(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "q", ["q1 0 d1 2", "q1 0 d2", "q1 0 d3 -1", "q1 0 d4 x", "q1 0 d1 3"])
    _, problems = read_qrels(path)
    assert [(p.line, p.severity) for p in problems] == [
        (2, "error"),
        (4, "error"),
        (3, "warning"),
        (5, "warning"),
    ]
    assert "negative grade read as trec_eval reads them: in the pool but unjudged" in problems[2].message
    assert "the last line's grade is kept: line 5: q1 d1 (2 then 3)" in problems[3].message


def test_run_is_ordered_like_trec_eval(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "run",
        [
            "q1 Q0 a 1 1.0 sys",
            "q1 Q0 c 2 1.0 sys",
            "q1 Q0 b 3 2.0 sys",
            "q1 Q0 z 4 0.5 sys",
        ],
    )
    run = load_trec_run(path)
    # score descending, ties by doc id descending; the rank column is ignored
    assert run.cases["q1"].ranking == ["b", "c", "a", "z"]
    assert run.name == "sys" and run.sha256 is not None


def test_run_duplicates_counted_once_and_reported(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "run", ["q1 Q0 a 1 1.0 s", "q1 Q0 b 2 0.5 s", "q1 Q0 a 3 0.2 s"])
    run = load_trec_run(path)
    assert run.cases["q1"].ranking == ["a", "b", "a"] and run.cases["q1"].duplicates == 1
    assert any("duplicate" in note for note in run.problems)


def test_run_errors_name_the_line(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "run", ["q1 Q0 a 1 1.0 s", "q1 Q0 b 2", "q1 Q0 c 3 NaN s", "q1 Q0 d 4 high s"]
    )
    _, problems = read_trec_run(path)
    assert [p.line for p in problems] == [2, 3, 4]
    assert "6 columns" in problems[0].message and "finite" in problems[1].message
    with pytest.raises(ValidationError):
        load_trec_run(path)


def test_trec_run_round_trip(tmp_path: Path) -> None:
    run = load_trec_run(write_lines(tmp_path / "run", ["q1 Q0 a 1 3 s", "q1 Q0 b 2 2 s", "q2 Q0 c 1 1 s"]))
    out = tmp_path / "again"
    write_trec_run(run, out)
    again = load_trec_run(out)
    assert {q: c.ranking for q, c in again.cases.items()} == {q: c.ranking for q, c in run.cases.items()}


def test_jsonl_run_keeps_list_order_errors_and_latency(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "run.jsonl",
        [
            json.dumps(
                {
                    "id": "q1",
                    "retrieved": ["b", {"chunk_id": "a", "score": 0.1, "tenant_id": "t"}, "b"],
                    "latency_ms": 12.5,
                }
            ),
            json.dumps({"query_id": "q2", "error": "timeout after 10s"}),
        ],
    )
    run = load_jsonl_run(path)
    assert run.cases["q1"].ranking == ["b", "a", "b"] and run.cases["q1"].duplicates == 1
    assert run.cases["q1"].items[1].tenant_id == "t" and run.cases["q1"].latency_ms == 12.5
    assert run.cases["q2"].error == "timeout after 10s"
    bad = write_lines(
        tmp_path / "bad.jsonl",
        [json.dumps({"id": "q1"}), json.dumps({"id": "q2", "retrieved": [{"score": 1}]})],
    )
    with pytest.raises(ValidationError) as info:
        load_jsonl_run(bad)
    assert [p.line for p in info.value.problems] == [1, 2]


def test_format_detection(tmp_path: Path) -> None:
    golden = write_lines(
        tmp_path / "g.jsonl", [json.dumps({"id": "a", "query": "q", "relevant_chunk_ids": []})]
    )
    qrels = write_lines(tmp_path / "qrels.txt", ["q1 0 d1 1"])
    assert detect_dataset_format(golden) == "jsonl" and detect_dataset_format(qrels) == "qrels"
    assert load_dataset(qrels).cases[0].relevant_set() == {"d1"}
    with pytest.raises(InputError, match="not found"):
        load_dataset(tmp_path / "nope.jsonl")
    with pytest.raises(InputError, match="not a BEIR dataset"):
        load_dataset(tmp_path)
    run_jsonl = write_lines(tmp_path / "r.jsonl", [json.dumps({"id": "a", "retrieved": []})])
    assert load_run(run_jsonl).cases["a"].ranking == []


def make_beir(root: Path) -> Path:
    (root / "qrels").mkdir(parents=True)
    write_lines(
        root / "corpus.jsonl",
        [json.dumps({"_id": d, "title": d.upper(), "text": f"text of {d}"}) for d in "abcd"],
    )
    write_lines(
        root / "queries.jsonl",
        [json.dumps({"_id": q, "text": f"query {q}"}) for q in ("q1", "q2", "q3", "q4")],
    )
    write_lines(
        root / "qrels" / "test.tsv",
        ["query-id\tcorpus-id\tscore", "q1\ta\t2", "q1\tb\t1", "q2\tc\t0", "q3\td\t1"],
    )
    return root


def test_beir_semantics(tmp_path: Path) -> None:
    ds = load_beir(make_beir(tmp_path / "beir"))
    assert [c.id for c in ds.cases] == ["q1", "q2", "q3"]
    assert ds.skipped["queries_without_judgments"] == 1  # q4: left out and counted, not unanswerable
    q1, q2, _ = ds.cases
    assert q1.query == "query q1" and q1.relevant_set() == {"a", "b"}
    assert not q2.is_answerable()  # only a grade-0 judgment
    with pytest.raises(InputError, match="available splits: test"):
        load_beir(tmp_path / "beir", split="dev")


def test_import_beir_writes_corpus_and_dataset(tmp_path: Path) -> None:
    summary = import_beir(make_beir(tmp_path / "beir"), tmp_path / "out")
    assert summary["documents"] == 4 and summary["cases"] == 3 and summary["queries_without_judgments"] == 1
    docs = [json.loads(line) for line in (tmp_path / "out" / "corpus.jsonl").read_text().splitlines()]
    assert docs[0] == {
        "doc_id": "a",
        "tenant_id": "default",
        "title": "A",
        "text": "text of a",
        "metadata": {},
    }
    ds = load_dataset(tmp_path / "out" / "dataset.jsonl")
    assert ds.cases[0].relevant_chunk_ids == ("a", "b")
    assert ds.cases[0].evidence[0].end == len("text of a")  # whole-document evidence span
    assert ds.cases[1].relevant_chunk_ids == ()


def test_real_beir_sets_load(beir_root: Path) -> None:
    for name, cases in (("msmarco", 43), ("dbpedia", 40), ("business-reports", 11)):
        ds = load_dataset(beir_root / name)
        assert len(ds.cases) == cases
        assert ds.skipped["queries_without_judgments"] == 50 - cases
