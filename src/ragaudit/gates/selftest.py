"""Gate 1: the metric math self-test, run in-process before any number is trusted.

Known-answer checks of the pure metric functions **and** the vectorised bulk engine (both must give
the expected value): the lesson's six unit tests (section 11) plus graded, duplicate, short-list,
cut-off and tie-order cases whose answers are worked out by hand in each check's ``why``. A failure
means the installed ragaudit computes wrong numbers, so no quality gate can be believed.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragaudit.metrics.bulk import build_rank_matrix, compute
from ragaudit.metrics.names import parse_metric
from ragaudit.metrics.pure import (
    Gain,
    average_precision,
    hit_at_k,
    ndcg_at_k,
    precision_at_k,
    recall_at_k,
    reciprocal_rank,
)

LOG2_3 = math.log2(3)
TOLERANCE = 1e-12


@dataclass(frozen=True)
class KnownAnswer:
    """``metric`` of ``ranking`` against ``grades`` (relevant = grade >= 1) must equal ``expected``."""

    name: str
    metric: str
    ranking: tuple[str, ...]
    grades: Mapping[str, int]
    expected: float
    why: str
    gain: Gain = "exponential"


KNOWN_ANSWERS: tuple[KnownAnswer, ...] = (
    KnownAnswer("lesson: recall@3", "R@3", ("A", "X", "B", "Y"), dict.fromkeys("ABCD", 1), 0.5, "2 of 4"),
    KnownAnswer(
        "lesson: precision@4 fixed k", "P@4", ("A", "X", "B", "Y"), dict.fromkeys("ABC", 1), 0.5, "2/4"
    ),
    KnownAnswer(
        "lesson: RR third position", "MRR", ("X", "Y", "B", "A"), dict.fromkeys("AB", 1), 1 / 3, "1/3"
    ),
    KnownAnswer("lesson: RR no hit", "MRR", ("X", "Y"), {"A": 1}, 0.0, "no relevant item"),
    KnownAnswer(
        "lesson: nDCG ideal order", "nDCG@3", ("A", "B", "C"), {"A": 3, "B": 2, "C": 1}, 1.0, "ideal"
    ),
    KnownAnswer(
        "lesson: nDCG inverted",
        "nDCG@3",
        ("C", "B", "A"),
        {"A": 3, "B": 2, "C": 1},
        (1 + 3 / LOG2_3 + 7 / 2) / (7 + 3 / LOG2_3 + 1 / 2),
        "(1 + 3/log2 3 + 7/2) / (7 + 3/log2 3 + 1/2) < 1",
    ),
    KnownAnswer(
        "graded: linear gain",
        "nDCG@3",
        ("C", "B", "A"),
        {"A": 3, "B": 2, "C": 1},
        (1 + 2 / LOG2_3 + 3 / 2) / (3 + 2 / LOG2_3 + 1 / 2),
        "gains rel, not 2^rel - 1",
        "linear",
    ),
    KnownAnswer(
        "graded: ideal counts unretrieved items",
        "nDCG@2",
        ("A",),
        {"A": 1, "B": 3},
        1 / (7 + 1 / LOG2_3),
        "IDCG ranks B (grade 3) first although it was not retrieved",
    ),
    KnownAnswer(
        "graded: grade 0 gains nothing",
        "nDCG@2",
        ("Z", "A"),
        {"Z": 0, "A": 2},
        (3 / LOG2_3) / 3,
        "a judged non-relevant item at rank 1 pushes A to rank 2",
    ),
    KnownAnswer(
        "duplicates count once", "R@2", ("A", "A", "B"), dict.fromkeys("AB", 1), 0.5, "the copy spends slot 2"
    ),
    KnownAnswer("short list, fixed k", "P@5", ("A",), {"A": 1}, 0.2, "1 hit / k=5, not / 1 returned"),
    KnownAnswer("MRR cut-off", "MRR@2", ("X", "Y", "A"), {"A": 1}, 0.0, "first hit at rank 3 > k"),
    KnownAnswer(
        "AP over all relevant",
        "MAP",
        ("A", "X", "B"),
        dict.fromkeys("ABC", 1),
        (1 + 2 / 3) / 3,
        "(1 + 2/3) / 3",
    ),
    KnownAnswer("hit@2", "Hit@2", ("X", "A"), {"A": 1}, 1.0, "a relevant item in the top 2"),
)


@dataclass(frozen=True)
class CheckResult:
    name: str
    passed: bool
    detail: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "passed": self.passed, "detail": self.detail}


@dataclass(frozen=True)
class SelfTestReport:
    checks: tuple[CheckResult, ...]
    seconds: float = 0.0
    failures: tuple[CheckResult, ...] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "failures", tuple(c for c in self.checks if not c.passed))

    @property
    def passed(self) -> bool:
        return not self.failures


def pure_value(case: KnownAnswer) -> float:
    """The metric by the reference (pure) function."""
    spec = parse_metric(case.metric)
    relevant = {d for d, g in case.grades.items() if g >= 1}
    ranking = list(case.ranking)
    k = spec.k
    pure: dict[str, Callable[[], float]] = {
        "R": lambda: recall_at_k(ranking, relevant, k or len(ranking)),
        "P": lambda: precision_at_k(ranking, relevant, k or len(ranking)),
        "Hit": lambda: hit_at_k(ranking, relevant, k or len(ranking)),
        "MRR": lambda: reciprocal_rank(ranking, relevant, k),
        "MAP": lambda: average_precision(ranking, relevant, k),
        "nDCG": lambda: ndcg_at_k(ranking, dict(case.grades), k, case.gain),
    }
    return pure[spec.family]()


def bulk_value(case: KnownAnswer) -> float:
    """The metric by the bulk engine, for a one-query batch."""
    spec = parse_metric(case.metric)
    relevant = {d for d, g in case.grades.items() if g >= 1}
    matrix = build_rank_matrix([list(case.ranking)], [relevant], [dict(case.grades)])
    return float(compute(matrix, [spec], case.gain)[spec.name][0])


def check_known_answer(case: KnownAnswer) -> CheckResult:
    try:
        pure, bulk = pure_value(case), bulk_value(case)
    except Exception as exc:  # a crash is a failed check, reported like one
        return CheckResult(case.name, False, f"{case.metric} raised {type(exc).__name__}: {exc}")
    ok = abs(pure - case.expected) <= TOLERANCE and abs(bulk - case.expected) <= TOLERANCE
    detail = f"{case.metric} expected {case.expected:.6f} ({case.why}); pure {pure:.6f}, bulk {bulk:.6f}"
    return CheckResult(case.name, ok, detail)


def _inverted_below_ideal() -> CheckResult:
    grades = {"A": 3, "B": 2, "C": 1}
    ideal = ndcg_at_k(["A", "B", "C"], grades, 3)
    inverted = ndcg_at_k(["C", "B", "A"], grades, 3)
    return CheckResult(
        "lesson: inverted ranking penalised",
        inverted < ideal,
        f"nDCG@3 inverted {inverted:.6f} < ideal {ideal:.6f}",
    )


def _trec_tie_order() -> CheckResult:
    from ragaudit.data.run import RankedItem, order_trec

    items = [RankedItem("d1", 1.0), RankedItem("d3", 1.0), RankedItem("d2", 2.0), RankedItem("d0", None)]
    got = [it.chunk_id for it in order_trec(items)]
    want = ["d2", "d3", "d1", "d0"]
    return CheckResult(
        "run-file ties: score desc, then id desc",
        got == want,
        f"expected {want}, got {got} (trec_eval's order)",
    )


def run_selftest() -> SelfTestReport:
    """Run every check (a few milliseconds); the report lists each one with its numbers."""
    started = time.perf_counter()
    checks = [*(check_known_answer(c) for c in KNOWN_ANSWERS), _inverted_below_ideal(), _trec_tie_order()]
    return SelfTestReport(tuple(checks), time.perf_counter() - started)
