"""Abstention: AUROC (rank-based, ties), the best threshold, decline detection, report summaries."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragaudit.context.abstention import (
    auroc,
    best_threshold,
    generated_abstention,
    is_decline,
    midranks,
    retrieval_abstention,
)


def brute_force_auroc(positives: list[float], negatives: list[float]) -> float:
    """P(pos > neg) + ½ P(pos == neg) over every pair."""
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


scores = st.lists(st.sampled_from([-math.inf, 0.0, 0.5, 1.0, 1.5, 2.0, 7.25]), min_size=1, max_size=12)


@given(scores, scores)
def test_auroc_equals_the_pairwise_count_with_ties(positives: list[float], negatives: list[float]) -> None:
    assert auroc(positives, negatives) == pytest.approx(brute_force_auroc(positives, negatives), abs=1e-12)


def test_auroc_matches_sklearn_when_installed() -> None:
    metrics = pytest.importorskip("sklearn.metrics")
    positives, negatives = [3.0, 2.0, 2.0, 0.5], [2.0, 1.0, 0.1]
    expected = metrics.roc_auc_score([1] * 4 + [0] * 3, positives + negatives)
    assert auroc(positives, negatives) == pytest.approx(expected)


def test_auroc_extremes_and_undefined() -> None:
    assert auroc([5.0, 4.0], [1.0, 0.0]) == 1.0
    assert auroc([0.0], [1.0]) == 0.0
    assert auroc([1.0, 1.0], [1.0]) == 0.5
    assert math.isnan(auroc([], [1.0]))
    assert math.isnan(auroc([1.0], []))
    with pytest.raises(ValueError, match="NaN"):
        auroc([math.nan], [1.0])


def test_midranks_share_tied_ranks() -> None:
    assert midranks([10.0, 20.0, 10.0, 30.0]) == [1.5, 3.0, 1.5, 4.0]


def test_best_threshold_maximises_accuracy_and_prefers_coverage() -> None:
    choice = best_threshold([3.0, 2.0, 0.5], [1.0, 0.2])
    assert choice is not None
    # ">= 0.5" and ">= 2.0" both get 4 of 5 right; the lower one answers every answerable case
    assert choice.threshold == 0.5
    assert choice.accuracy == pytest.approx(0.8)
    assert choice.answerable_coverage == 1.0
    assert choice.unanswerable_abstained == 0.5
    strict = best_threshold([3.0, 2.0], [1.0, 0.2])
    assert strict is not None
    assert (strict.threshold, strict.accuracy, strict.answerable_coverage) == (2.0, 1.0, 1.0)


def test_best_threshold_can_abstain_always() -> None:
    choice = best_threshold([0.1], [5.0, 6.0])
    assert choice is not None
    assert choice.threshold is None  # abstaining on everything is right 2 times out of 3
    assert choice.accuracy == pytest.approx(2 / 3)
    assert best_threshold([], []) is None


@pytest.mark.parametrize(
    ("answer", "declined"),
    [
        ("I don't know based on the provided context.", True),
        ("The context does not mention ATEX certification.", True),
        ("There is no information about student discounts.", True),
        ("This is not specified in the provided documents.", True),
        ("", True),
        ("N/A", True),
        ("No, accidental damage such as a cracked screen is not covered.", False),
        ("There is no data retention after 30 days.", False),
        ("24 months from delivery.", False),
        ("No refund for the current month.", False),
    ],
)
def test_decline_detection(answer: str, declined: bool) -> None:
    assert is_decline(answer) is declined


def test_retrieval_abstention_from_report_entries() -> None:
    per_case = [
        {"id": "a", "status": "ok", "answerable": True, "retrieved": [{"chunk_id": "x", "score": 9.0}]},
        {"id": "b", "status": "ok", "answerable": True, "retrieved": [{"chunk_id": "y", "score": 4.0}]},
        {
            "id": "u",
            "status": "unanswerable",
            "answerable": False,
            "retrieved": [{"chunk_id": "z", "score": 3.0}],
        },
        {"id": "v", "status": "unanswerable", "answerable": False, "retrieved": []},
        {"id": "e", "status": "error", "answerable": True, "retrieved": []},
    ]
    out = retrieval_abstention(per_case)
    assert (out["answerable"], out["unanswerable"], out["left_out"]) == (2, 2, 1)
    assert out["auroc"] == 1.0
    assert out["best_threshold"]["threshold"] == 4.0
    assert out["best_threshold"]["accuracy"] == 1.0


def test_generated_abstention_rates() -> None:
    out = generated_abstention([(False, True), (False, False), (True, False), (True, True), (True, False)])
    assert out["abstention_rate"] == 0.5
    assert out["false_abstention_rate"] == pytest.approx(1 / 3)
    assert generated_abstention([])["abstention_rate"] is None
