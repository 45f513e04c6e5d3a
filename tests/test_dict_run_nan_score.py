"""A dict run ranks by score (trec_eval's order); a NaN or infinite score cannot be ranked, so it is an
InputError naming the case and the id, as a string score is (before: NaN was accepted and ranked
wherever the sort put it)."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragaudit


@pytest.mark.parametrize("score", [float("nan"), float("inf"), float("-inf")])
def test_a_score_that_cannot_be_ranked_is_refused(tmp_path: Path, score: float) -> None:
    golden = tmp_path / "golden.jsonl"
    golden.write_text('{"id": "q1", "query": "x", "relevance": {"d2": 1}}\n', encoding="utf-8")
    with pytest.raises(ragaudit.InputError, match=r"case 'q1': the score of 'd1' is .*, not a number"):
        ragaudit.evaluate(golden, {"q1": {"d1": score, "d2": 0.5}}, metrics="MRR")
