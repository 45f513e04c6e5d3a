"""Ids that miss judged ids only by their form (NFD vs NFC, width forms, case, surrounding spaces) still
score as trec_eval scores them (exact match), but the report says so: a note naming how many cases and
one example, from ``eval`` (both engines), the Python API (a warning) and the pytest plugin (with a
failed floor). Before: those cases scored 0 with only the Judged@k "lower bound" warning."""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import numpy as np
import pytest

import ragaudit
from ragaudit.cli.main import main
from ragaudit.data.fast_qrels import read_qrels_index
from ragaudit.data.fast_run import parse_run_block, rank_judged
from ragaudit.data.fast_text import TextBlock
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.evaluation.fast_trec import evaluate_trec_files
from ragaudit.evaluation.id_forms import IdFormCheck, IdFormWarning, how_they_differ, id_form_note, visible
from ragaudit.pytest_plugin import assert_floors

NFC = unicodedata.normalize("NFC", "dóc-1")
NFD = unicodedata.normalize("NFD", NFC)
QRELS = f"q1 0 {NFC} 1\nq2 0 doc-2 1\nq3 0 DOC-3 1\nq4 0 doc-4 1\n"
RUN = f"q1 Q0 {NFD} 1 2.0 t\nq1 Q0 zz 2 1.0 t\nq2 Q0 ｄｏｃ-2 1 1.0 t\nq3 Q0 doc-3 1 1.0 t\nq4 Q0 doc-4 1 1.0 t\n"


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    qrels, run = tmp_path / "q.qrels", tmp_path / "r.trec"
    qrels.write_text(QRELS, encoding="utf-8")
    run.write_text(RUN, encoding="utf-8")
    return qrels, run


def test_the_forms_are_named_and_shown_visibly() -> None:
    assert NFC != NFD and visible(NFD) == "do\\u0301c-1" and visible(NFC) == NFC
    assert how_they_differ(NFD, NFC) == "NFC"
    assert how_they_differ("ｄｏｃ-2", "doc-2") == "NFKC" and visible("ｄ") == "\\uff44"
    assert how_they_differ("doc-3", "DOC-3") == "case"
    assert how_they_differ("doc-5 ", "doc-5") == "whitespace"
    check = IdFormCheck()
    check.add("q1", ["doc-9", NFD], {NFC: 1})
    check.add("q2", ["doc-2"], {"doc-2": 1, "other": 0})  # exact match: nothing to say
    check.add("q3", ["unrelated"], {"doc-3": 1})
    assert check.cases == 1 and check.example == ("q1", NFD, NFC)


def test_eval_keeps_exact_scoring_and_notes_the_cases(files: tuple[Path, Path]) -> None:
    result = evaluate(str(files[0]), str(files[1]), "nDCG@10")
    assert result.per_case_values("nDCG@10") == {"q1": 0.0, "q2": 0.0, "q3": 0.0, "q4": 1.0}  # as trec_eval
    note = id_form_note(result.notes)
    assert note is not None and "in 3 case(s)" in note
    assert f"case q1: retrieved 'do\\u0301c-1' vs judged '{NFC}' (NFC)" in note


def test_the_other_direction_and_spaces_in_a_golden_set(tmp_path: Path) -> None:
    golden = tmp_path / "g.jsonl"
    cases = [
        {"id": "a", "query": "x", "relevance": {NFD: 1}},
        {"id": "b", "query": "y", "relevance": {"d5": 1}},
    ]
    golden.write_text("".join(json.dumps(c) + "\n" for c in cases), encoding="utf-8")
    result = evaluate(str(golden), {"a": [NFC], "b": ["d5 "]}, "R@10")
    note = id_form_note(result.notes)
    assert note is not None and "in 2 case(s)" in note and "(NFC)" in note
    assert id_form_note(evaluate(str(golden), {"a": [NFD, "x"], "b": ["d5"]}, "R@10").notes) is None


def test_the_fast_engine_gives_the_same_note(files: tuple[Path, Path]) -> None:
    fast = evaluate_trec_files(files[0], files[1], "nDCG@10")
    assert fast.mode == "stream"
    reference = evaluate(str(files[0]), str(files[1]), "nDCG@10")
    assert id_form_note(fast.notes) == id_form_note(reference.notes)


def test_the_fast_engine_looks_at_no_row_of_plain_ids(tmp_path: Path) -> None:
    qrels = tmp_path / "q.qrels"
    qrels.write_text("q1 0 d1 1\nq1 0 d2 0\n", encoding="utf-8")
    index = read_qrels_index(str(qrels), 1, 1 << 20)
    rows = parse_run_block(TextBlock.of(b"q1 Q0 d3 1 2.0 t\nq1 Q0 d1 2 1.0 t\n"))
    wanted = np.ones(index.n_queries, dtype=np.bool_)
    batch = rank_judged(rows, index, wanted, np.zeros(index.n_queries, dtype=np.bool_))
    assert batch.form_docs.size == 0 and not rows.non_ascii


def test_the_api_warns_and_the_plugin_says_it_with_a_failed_floor(files: tuple[Path, Path]) -> None:
    with pytest.warns(IdFormWarning, match="in 3 case"):
        result = ragaudit.evaluate(files[0], files[1], metrics="nDCG@10")
    with pytest.raises(AssertionError, match="hint: ids that differ from judged ids only in form"):
        assert_floors(result, {"nDCG@10": 0.5})


def test_the_cli_prints_the_note(files: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    for engine in ("on", "off"):
        main(
            [
                "eval",
                "--dataset",
                str(files[0]),
                "--run",
                str(files[1]),
                "--metrics",
                "nDCG@10",
                "--fast",
                engine,
            ]
        )
        out = capsys.readouterr().out
        assert "note: ids that differ from judged ids only in form: in 3 case(s)" in out, engine
