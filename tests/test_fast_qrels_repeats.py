"""Qrels that judge a (query, doc) pair twice stay on the array reader, with the validated reader's
index and its note (count, lines, grades), whatever the block size."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from ragaudit.data import fast_qrels
from ragaudit.data.trec import load_qrels_noted

FIELDS = ("query_ids", "file_order", "n_relevant", "positive_offsets", "positive_grades")


def _judgments(index: fast_qrels.QrelsIndex) -> list[tuple[int, bytes, int]]:
    """Every (query index, doc id, grade) the join table holds (its key layout depends on the row count)."""
    queries = (index.keys >> np.uint64(index.hash_bits)).tolist()
    docs = fast_qrels.as_bytes(index.doc_words).tolist()
    return sorted(zip(queries, docs, index.grades.tolist(), strict=True))


def _write_qrels(path: Path, seed: int) -> None:
    rng = random.Random(seed)
    lines = ["query-id\tcorpus-id\tscore"] if seed % 3 == 0 else []
    for q in range(rng.randint(2, 40)):
        for d in rng.sample(range(60), rng.randint(1, 9)):
            judged = [rng.randint(0, 3) for _ in range(rng.choice([1, 1, 1, 2, 3]))]
            for grade in judged:
                cols = (
                    [f"q{q}", f"doc-{d}", str(grade)] if lines and lines[0].startswith("query-id") else None
                )
                lines.append("\t".join(cols) if cols else f"q{q} 0 doc-{d} {grade}")
            if rng.random() < 0.05:
                lines.append("")
    rng.shuffle(lines[1:] if lines and lines[0].startswith("query-id") else lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("block_bytes", [64, 1 << 20])
def test_repeated_pairs_keep_the_array_reader_and_the_validated_readers_note(
    tmp_path: Path, seed: int, block_bytes: int
) -> None:
    path = tmp_path / "qrels.txt"
    _write_qrels(path, seed)
    fast = fast_qrels._from_arrays(
        str(path), [fast_qrels._fast_judgments(str(path), block_bytes)], 1, block_bytes
    )
    slow = fast_qrels._from_arrays(str(path), [fast_qrels._slow_judgments(str(path))], 1, block_bytes)
    for name in FIELDS:
        np.testing.assert_array_equal(getattr(fast, name), getattr(slow, name), err_msg=name)
    assert _judgments(fast) == _judgments(slow)
    assert fast.notes == slow.notes == tuple(load_qrels_noted(path)[1])


def test_the_note_names_each_repeat_line_and_both_grades(tmp_path: Path) -> None:
    path = tmp_path / "qrels.txt"
    path.write_text("q1 0 a 1\nq1 0 b 0\n\nq2 0 a 2\nq1 0 a 3\nq1 0 a 0\n", encoding="utf-8")
    index = fast_qrels.read_qrels_index(path, block_bytes=8)
    assert index.notes == (
        f"{path}:5: warning: 2 repeated (query, doc) judgment(s); the last line's grade is kept: "
        "line 5: q1 a (1 then 3); line 6: q1 a (3 then 0) (fix: keep one judgment per pair)",
    )
    assert index.n_relevant.tolist() == [0, 1]  # q1's a ends at grade 0, q2's a is relevant


@pytest.mark.parametrize("header", ["", "query-id corpus-id score\n"])
@pytest.mark.parametrize("block_bytes", [16, 1 << 20])
def test_rows_on_consecutive_lines_name_their_lines_without_a_second_pass(
    tmp_path: Path, header: str, block_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No blank line: row ``r`` is on line ``first + r``, so the note needs no second read of the file."""
    path = tmp_path / "qrels.txt"
    rows = ["q1 a 1", "q1 b 0", "q2 a 2", "q1 a 3", "q2 c 1", "q1 a 0"]
    path.write_text(header + "".join(f"{r}\n" for r in rows), encoding="utf-8")
    monkeypatch.setattr(fast_qrels, "_row_lines", None)  # called, it would fail
    index = fast_qrels.read_qrels_index(path, block_bytes=block_bytes)
    assert index.notes == tuple(load_qrels_noted(path)[1])
    assert f"line {4 + bool(header)}: q1 a (1 then 3)" in index.notes[0]
