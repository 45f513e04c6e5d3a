"""Hypothesis properties: the bulk engine equals the pure functions; bounds, monotonicity, invariances."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ragaudit.metrics.bulk import build_rank_matrix, compute
from ragaudit.metrics.measures import MEASURES, measure_of
from ragaudit.metrics.names import parse_metrics
from ragaudit.metrics.pure import (
    Gain,
    average_precision,
    hit_at_k,
    ndcg_at_k,
    precision_at_k,
    r_precision,
    recall_at_k,
    reciprocal_rank,
)

IDS = [f"d{i}" for i in range(12)]
ranking_st = st.lists(st.sampled_from(IDS), max_size=15)  # duplicates allowed on purpose
grades_st = st.dictionaries(st.sampled_from(IDS), st.integers(0, 3), max_size=10)
k_st = st.integers(1, 20)
_FIXED = [
    "R@1",
    "R@5",
    "R@20",
    "P@1",
    "P@5",
    "P@20",
    "Hit@3",
    "MRR",
    "MRR@3",
    "nDCG",
    "nDCG@1",
    "nDCG@5",
    "nDCG@20",
    "MAP",
    "MAP@5",
    "RPrec",
]
SPECS = parse_metrics([*_FIXED, *(example for m in MEASURES for example in m.examples)])


def reference(
    spec_family: str, k: int | None, ranking: list[str], grades: dict[str, int], gain: Gain
) -> float:
    """The family's pure function (``nan`` where it is undefined), from the measure registry."""
    rel = {d for d, g in grades.items() if g >= 1}
    return measure_of(spec_family).value(ranking, grades, rel, k, gain)


def test_every_registered_family_is_property_tested() -> None:
    assert {s.family for s in SPECS} == {m.family for m in MEASURES}


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(ranking_st, grades_st), min_size=1, max_size=8),
    st.sampled_from(["exponential", "linear"]),
)
def test_bulk_engine_equals_pure_functions(
    queries: list[tuple[list[str], dict[str, int]]], gain: Gain
) -> None:
    rankings = [q[0] for q in queries]
    grades = [q[1] for q in queries]
    rel_sets = [{d for d, g in gr.items() if g >= 1} for gr in grades]
    values = compute(build_rank_matrix(rankings, rel_sets, grades), SPECS, gain)
    for spec in SPECS:
        for row, (ranking, gr) in enumerate(queries):
            expected = reference(spec.family, spec.k, ranking, gr, gain)
            got = values[spec.name][row]
            if math.isnan(expected):
                assert math.isnan(got), spec.name
            else:
                assert got == __import__("pytest").approx(expected, abs=1e-12), (spec.name, ranking, gr)


@settings(max_examples=200, deadline=None)
@given(ranking_st, grades_st, k_st)
def test_metrics_are_bounded(ranking: list[str], grades: dict[str, int], k: int) -> None:
    rel = {d for d, g in grades.items() if g >= 1}
    for value in (
        precision_at_k(ranking, rel, k),
        hit_at_k(ranking, rel, k),
        reciprocal_rank(ranking, rel, k),
        ndcg_at_k(ranking, grades, k),
        ndcg_at_k(ranking, grades, k, "linear"),
    ):
        assert 0.0 <= value <= 1.0 + 1e-12
    if rel:
        for value in (
            recall_at_k(ranking, rel, k),
            average_precision(ranking, rel, k),
            r_precision(ranking, rel),
        ):
            assert 0.0 <= value <= 1.0 + 1e-12


@settings(max_examples=200, deadline=None)
@given(ranking_st, grades_st, k_st)
def test_recall_hit_and_map_grow_with_k(ranking: list[str], grades: dict[str, int], k: int) -> None:
    rel = {d for d, g in grades.items() if g >= 1}
    assert hit_at_k(ranking, rel, k) <= hit_at_k(ranking, rel, k + 1)
    assert reciprocal_rank(ranking, rel, k) <= reciprocal_rank(ranking, rel, k + 1)
    if rel:
        assert recall_at_k(ranking, rel, k) <= recall_at_k(ranking, rel, k + 1)
        assert average_precision(ranking, rel, k) <= average_precision(ranking, rel, k + 1) + 1e-12


@settings(max_examples=200, deadline=None)
@given(ranking_st, grades_st, k_st, st.randoms(use_true_random=False))
def test_set_metrics_ignore_order_within_the_top_k(
    ranking: list[str], grades: dict[str, int], k: int, rnd: __import__("random").Random
) -> None:
    rel = {d for d, g in grades.items() if g >= 1}
    top = list(dict.fromkeys(ranking[:k]))
    shuffled = top[:]
    rnd.shuffle(shuffled)
    assert precision_at_k(shuffled, rel, k) == precision_at_k(top, rel, k)
    assert hit_at_k(shuffled, rel, k) == hit_at_k(top, rel, k)
    if rel:
        assert recall_at_k(shuffled, rel, k) == recall_at_k(top, rel, k)


@settings(max_examples=200, deadline=None)
@given(ranking_st, grades_st, k_st)
def test_sorting_by_grade_never_lowers_ndcg(ranking: list[str], grades: dict[str, int], k: int) -> None:
    unique = list(dict.fromkeys(ranking))
    best = sorted(unique, key=lambda d: grades.get(d, 0), reverse=True)
    assert ndcg_at_k(best, grades, k) >= ndcg_at_k(unique, grades, k) - 1e-12


@settings(max_examples=200, deadline=None)
@given(ranking_st, grades_st, k_st)
def test_repeating_an_id_never_gains(ranking: list[str], grades: dict[str, int], k: int) -> None:
    rel = {d for d, g in grades.items() if g >= 1}
    if not ranking:
        return
    doubled = [ranking[0], *ranking]  # the first id now appears twice in a row
    assert precision_at_k(doubled, rel, k) <= precision_at_k(ranking, rel, k)
    assert ndcg_at_k(doubled, grades, k) <= ndcg_at_k(ranking, grades, k) + 1e-12
    if rel:
        assert recall_at_k(doubled, rel, k) <= recall_at_k(ranking, rel, k)


def test_bulk_engine_on_empty_inputs() -> None:
    specs = parse_metrics("nDCG@10,R@5,P@5,MRR,MAP,RPrec,Hit@1")
    empty = compute(build_rank_matrix([], [], []), specs)
    assert all(v.shape == (0,) for v in empty.values())
    one_empty_ranking = compute(build_rank_matrix([[]], [{"a"}], [{"a": 2}]), specs)
    assert {name: float(v[0]) for name, v in one_empty_ranking.items()} == {s.name: 0.0 for s in specs}
    unanswerable = compute(build_rank_matrix([["a"]], [set()], [{"a": 0}]), specs)
    assert np.isnan(unanswerable["R@5"][0]) and np.isnan(unanswerable["MAP"][0])
    assert unanswerable["nDCG@10"][0] == 0.0 and unanswerable["P@5"][0] == 0.0
