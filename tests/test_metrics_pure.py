"""The lesson's six metric tests, plus the guard rails and the semantics policy on hand examples."""

from __future__ import annotations

import math

import pytest

from ragaudit.metrics.measure import KnownAnswer
from ragaudit.metrics.measures import MEASURES, measure_of
from ragaudit.metrics.names import parse_metric
from ragaudit.metrics.pure import (
    average_precision,
    dcg_at_k,
    hit_at_k,
    ndcg_at_k,
    precision_at_k,
    r_precision,
    recall_at_k,
    reciprocal_rank,
)


def test_recall_at_k_calculation() -> None:
    assert recall_at_k(["A", "X", "B", "Y"], {"A", "B", "C", "D"}, 3) == pytest.approx(0.5)


def test_precision_at_k_fixed_k() -> None:
    assert precision_at_k(["A", "X", "B", "Y"], {"A", "B", "C"}, 4) == pytest.approx(0.5)


def test_reciprocal_rank_third_position() -> None:
    assert reciprocal_rank(["X", "Y", "B", "A"], {"A", "B"}) == pytest.approx(1.0 / 3.0)


def test_reciprocal_rank_zero_hits() -> None:
    assert reciprocal_rank(["X", "Y"], {"A"}) == 0.0


def test_ndcg_ideal_order_is_one() -> None:
    assert ndcg_at_k(["A", "B", "C"], {"A": 3, "B": 2, "C": 1}, 3) == pytest.approx(1.0)


def test_ndcg_inverted_ranking_penalized() -> None:
    relevance = {"A": 3, "B": 2, "C": 1}
    assert ndcg_at_k(["C", "B", "A"], relevance, 3) < ndcg_at_k(["A", "B", "C"], relevance, 3)


@pytest.mark.parametrize("k", [0, -1, 2.5, True])
def test_non_positive_or_non_integer_k_is_rejected(k: object) -> None:
    with pytest.raises(ValueError, match="k must be a positive integer"):
        recall_at_k(["A"], {"A"}, k)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="k must be a positive integer"):
        ndcg_at_k(["A"], {"A": 1}, k)  # type: ignore[arg-type]


def test_negative_grade_is_rejected() -> None:
    with pytest.raises(ValueError, match="cannot be negative"):
        dcg_at_k(["A"], {"A": -1}, 1)


@pytest.mark.parametrize("fn", [recall_at_k, average_precision])
def test_metrics_undefined_without_relevant_items_raise(fn: object) -> None:
    with pytest.raises(ValueError, match="unanswerable"):
        fn(["A"], set(), 5)  # type: ignore[operator]
    with pytest.raises(ValueError, match="unanswerable"):
        r_precision(["A"], set())


def test_short_list_is_penalised_by_fixed_k_precision() -> None:
    assert precision_at_k(["A"], {"A"}, 5) == pytest.approx(0.2)


def test_duplicates_count_once_and_keep_their_slot() -> None:
    # A appears twice: the second copy gains nothing but still occupies rank 2, so B is at rank 3.
    assert recall_at_k(["A", "A", "B"], {"A", "B"}, 2) == pytest.approx(0.5)
    assert precision_at_k(["A", "A", "B"], {"A", "B"}, 3) == pytest.approx(2 / 3)
    assert dcg_at_k(["A", "A"], {"A": 1}, 2) == pytest.approx(1.0)
    assert ndcg_at_k(["A", "A"], {"A": 1}, 2) == pytest.approx(1.0)
    assert average_precision(["A", "A", "B"], {"A", "B"}) == pytest.approx((1 + 2 / 3) / 2)


def test_exponential_and_linear_gain() -> None:
    ranking, relevance = ["B", "A"], {"A": 3, "B": 1}
    exp_dcg = 1 / math.log2(2) + 7 / math.log2(3)
    lin_dcg = 1 / math.log2(2) + 3 / math.log2(3)
    assert dcg_at_k(ranking, relevance, 2) == pytest.approx(exp_dcg)
    assert dcg_at_k(ranking, relevance, 2, gain="linear") == pytest.approx(lin_dcg)
    with pytest.raises(ValueError, match="unknown gain"):
        dcg_at_k(ranking, relevance, 2, gain="cubic")  # type: ignore[arg-type]


def test_ideal_uses_all_judged_positive_items_even_unretrieved() -> None:
    # C (grade 2) is never retrieved but belongs to the ideal ranking.
    value = ndcg_at_k(["A"], {"A": 1, "C": 2}, 2, gain="linear")
    ideal = 2 / math.log2(2) + 1 / math.log2(3)
    assert value == pytest.approx(1.0 / ideal)


def test_ndcg_without_positive_grades_is_zero() -> None:
    assert ndcg_at_k(["A"], {"A": 0}, 5) == 0.0


def test_map_at_k_divides_by_all_relevant_items() -> None:
    assert average_precision(["A", "X", "B"], {"A", "B", "C", "D"}, 2) == pytest.approx(1 / 4)


def test_mrr_cutoff_and_hit() -> None:
    assert reciprocal_rank(["X", "Y", "A"], {"A"}, 2) == 0.0
    assert reciprocal_rank(["X", "Y", "A"], {"A"}, 3) == pytest.approx(1 / 3)
    assert hit_at_k(["X", "A"], {"A"}, 1) == 0.0
    assert hit_at_k(["X", "A"], {"A"}, 2) == 1.0


def test_r_precision() -> None:
    assert r_precision(["A", "X", "B"], {"A", "B"}) == pytest.approx(0.5)
    assert r_precision(["A"], {"A", "B", "C"}) == pytest.approx(1 / 3)


@pytest.mark.parametrize("case", [c for m in MEASURES for c in m.known_answers], ids=lambda c: c.name)
def test_every_registered_known_answer_holds_for_the_pure_function(case: KnownAnswer) -> None:
    spec = parse_metric(case.metric)
    relevant = {d for d, g in case.grades.items() if g >= 1}
    got = measure_of(spec.family).pure(list(case.ranking), dict(case.grades), relevant, spec.k, case.gain)
    assert got == pytest.approx(case.expected, abs=1e-12), case.why


def test_every_registered_family_has_known_answers() -> None:
    assert all(m.known_answers for m in MEASURES)
