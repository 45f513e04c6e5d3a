"""A benchmark whose winner is IN-SAMPLE (a fitted stage scored on the cases it was fitted on) does not
recommend it as if its lead were evidence: the recommendation says its figures are in-sample.
Measured on the demo KB: hybrid-rerank:fusion.json led hybrid by +0.070 nDCG@10 (significant) on the
golden set it was fitted on, and by +0.035 (p = 0.527, not significant) on the 24 held-out cases."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import ragaudit
from ragaudit.artifacts.in_sample import first_in_sample
from ragaudit.report.kinds.benchmark import BenchmarkKind

KB = Path(ragaudit.__file__).parent / "demo_data" / "kb"


@pytest.fixture(scope="module")
def benchmark() -> dict[str, Any]:
    result = ragaudit.bench(
        KB / "golden.jsonl", KB / "corpus.jsonl", ["bm25", "dense"], metrics="nDCG@10", resamples=200
    )
    return result.to_dict()


def _with_in_sample(report: dict[str, Any], pipeline: str) -> dict[str, Any]:
    section = {
        "state": "in_sample",
        "cases": 75,
        "overlap": 54,
        "stages": [],
        "text": "IN-SAMPLE: 54 of 75 ...",
    }
    return {**report, **first_in_sample([(f"pipeline {pipeline}", {"in_sample": section})])}


def test_an_in_sample_winner_is_named_in_the_recommendation(benchmark: dict[str, Any]) -> None:
    plain = BenchmarkKind().from_json(benchmark)
    winner = plain.ranking.winner if plain.ranking else None
    assert winner == "dense"
    assert "IN-SAMPLE" not in (plain.recommendation() or "")
    flagged = BenchmarkKind().from_json(_with_in_sample(benchmark, "dense")).recommendation() or ""
    assert "but dense's figures are IN-SAMPLE (its fitted stage was fitted on these cases)" in flagged


def test_an_in_sample_pipeline_that_did_not_win_is_named_where_the_recommendation_mentions_it(
    benchmark: dict[str, Any],
) -> None:
    other = BenchmarkKind().from_json(_with_in_sample(benchmark, "bm25")).recommendation() or ""
    assert "dense's figures are IN-SAMPLE" not in other  # the winner is not the fitted one
    assert "the runner-up bm25" in other  # named as the runner-up, so marked there
    assert "bm25: IN-SAMPLE figures (scored on the cases a fitted stage was fitted on)" in other
