"""A JSONL run is ranked by its list order (docs/datasets.md), a TREC run by score. When a JSONL list's
scores rise down the list, the two readings disagree: the evaluation says which one it used."""

from __future__ import annotations

from pathlib import Path

import ragaudit

GOLDEN = (
    '{"id": "q1", "query": "x", "relevance": {"d2": 1}}\n{"id": "q2", "query": "y", "relevance": {"d3": 1}}\n'
)


def _write(folder: Path, run: str) -> tuple[Path, Path]:
    golden, run_file = folder / "golden.jsonl", folder / "run.jsonl"
    golden.write_text(GOLDEN, encoding="utf-8")
    run_file.write_text(run, encoding="utf-8")
    return golden, run_file


def test_scores_that_rise_down_the_list_are_named(tmp_path: Path) -> None:
    golden, run = _write(
        tmp_path,
        '{"id": "q1", "retrieved": [{"chunk_id": "d1", "score": 0.2}, {"chunk_id": "d2", "score": 0.9}]}\n'
        '{"id": "q2", "retrieved": [{"chunk_id": "d3", "score": 0.9}, {"chunk_id": "d4", "score": 0.2}]}\n',
    )
    result = ragaudit.evaluate(golden, run, metrics="MRR")
    assert result.per_case[0].metrics["MRR"] == 0.5  # ranked by position, as documented
    (note,) = [n for n in result.notes if "higher score below a lower one" in n]
    assert note.startswith("1 case(s) list a higher score below a lower one (q1)")


def test_sorted_lists_and_lists_without_scores_add_no_note(tmp_path: Path) -> None:
    golden, run = _write(
        tmp_path,
        '{"id": "q1", "retrieved": ["d1", "d2"]}\n'
        '{"id": "q2", "retrieved": [{"chunk_id": "d3", "score": 0.9}, {"chunk_id": "d4", "score": 0.9}]}\n',
    )
    assert not [n for n in ragaudit.evaluate(golden, run, metrics="MRR").notes if "higher score" in n]
