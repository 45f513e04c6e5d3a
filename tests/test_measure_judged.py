"""Judged@k (metrics/measures/judged.py): pure function, bulk kernel, names, TREC files and negative grades."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ragaudit
from ragaudit.errors import MetricNameError
from ragaudit.evaluation.fast_trec import evaluate_trec_files
from ragaudit.metrics.bulk import build_rank_matrix, compute, compute_rankings
from ragaudit.metrics.measures.judged import judged_at_k
from ragaudit.metrics.names import parse_metric, parse_metrics

IDS = [f"d{i}" for i in range(12)]
ranking_st = st.lists(st.sampled_from(IDS), max_size=15)  # duplicates on purpose
grades_st = st.dictionaries(st.sampled_from(IDS), st.integers(0, 3), max_size=10)


def test_judged_counts_grade_zero_and_divides_by_what_was_returned() -> None:
    assert judged_at_k(["A", "Z", "X", "Y"], {"A": 2, "Z": 0}, 4) == pytest.approx(0.5)
    assert judged_at_k(["A", "Z", "X", "Y"], {"A": 2, "Z": 0}, 2) == 1.0
    assert judged_at_k(["A", "X"], {"A": 1}, 10) == pytest.approx(0.5)
    assert judged_at_k(["A", "A", "X"], {"A": 1}, 3) == pytest.approx(1 / 3)
    assert judged_at_k([], {"A": 1}, 5) == 0.0


def test_judged_refuses_bad_k_and_negative_grades() -> None:
    with pytest.raises(ValueError, match="k must be a positive integer"):
        judged_at_k(["A"], {"A": 1}, 0)
    with pytest.raises(ValueError, match="cannot be negative"):
        judged_at_k(["A"], {"A": -1}, 1)


def test_judged_names() -> None:
    assert parse_metric("judged@5").name == "Judged@5"
    with pytest.raises(MetricNameError, match="Judged needs a cut-off"):
        parse_metric("Judged")


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(ranking_st, grades_st), min_size=1, max_size=8), st.integers(1, 20))
def test_bulk_equals_pure(queries: list[tuple[list[str], dict[str, int]]], k: int) -> None:
    rankings = [q[0] for q in queries]
    grades = [q[1] for q in queries]
    rel = [{d for d, g in gr.items() if g >= 1} for gr in grades]
    specs = parse_metrics(f"Judged@{k},Judged@1")
    whole = compute(build_rank_matrix(rankings, rel, grades), specs)
    grouped = compute_rankings(rankings, rel, grades, specs)  # width groups, capped at the largest k
    for spec in specs:
        for row, (ranking, gr) in enumerate(queries):
            expected = judged_at_k(ranking, gr, spec.k or 1)
            assert whole[spec.name][row] == pytest.approx(expected, abs=1e-12)
            assert grouped[spec.name][row] == pytest.approx(expected, abs=1e-12)


def test_negative_trec_grades_are_not_judged(tmp_path: Path) -> None:
    """A negative grade is trec_eval's in-pool-unjudged: the reader drops the pair, so it is a hole."""
    qrels = tmp_path / "qrels.txt"
    qrels.write_text("q 0 a 1\nq 0 b 0\nq 0 c -1\n", encoding="utf-8")
    run = tmp_path / "run.trec"
    run.write_text("q Q0 a 1 0.9 t\nq Q0 b 2 0.8 t\nq Q0 c 3 0.7 t\nq Q0 x 4 0.6 t\n", encoding="utf-8")
    result = ragaudit.evaluate(qrels, run, "Judged@4,Judged@2,P@4")
    assert result.metrics["Judged@4"] == pytest.approx(2 / 4)  # a (1) and b (0) judged; c (-1) and x not
    assert result.metrics["Judged@2"] == 1.0
    fast = evaluate_trec_files(qrels, run, "Judged@4,Judged@2,P@4")
    assert fast.mode == "reference"
    assert fast.metrics == pytest.approx(result.metrics, abs=1e-12)


def test_fast_scorer_gives_evaluate_numbers_for_judged(tmp_path: Path) -> None:
    import randomruns

    coll = randomruns.make_collection(3)
    qrels = randomruns.write_qrels(coll.qrels, tmp_path / "qrels.txt")
    run = randomruns.write_run(coll.run, tmp_path / "run.trec")
    names = "Judged@1,Judged@5,Judged@20,nDCG@10"
    fast = evaluate_trec_files(qrels, run, names)
    slow = ragaudit.evaluate(qrels, run, names)
    assert fast.metrics == pytest.approx(slow.metrics, abs=1e-12)
    assert 0.0 < slow.metrics["Judged@5"] < 1.0
