"""Gate 1: the metric math self-test, run in-process before any number is trusted.

Known-answer checks of the pure metric functions **and** the vectorised bulk engine (both must give
the expected value): the lesson's six unit tests (section 11) plus graded, duplicate, short-list,
cut-off and tie-order cases whose answers are worked out by hand in each check's ``why``. The cases
are each measure's own (:attr:`~ragaudit.metrics.measure.Measure.known_answers`), so every family of
the registry is checked. A failure
means the installed ragaudit computes wrong numbers, so no quality gate can be believed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from ragaudit.metrics.bulk import build_rank_matrix, compute
from ragaudit.metrics.measure import KnownAnswer
from ragaudit.metrics.measures import MEASURES, measure_of
from ragaudit.metrics.names import parse_metric
from ragaudit.metrics.pure import ndcg_at_k

TOLERANCE = 1e-12

KNOWN_ANSWERS: tuple[KnownAnswer, ...] = tuple(case for m in MEASURES for case in m.known_answers)
"""Every measure's known answers (:attr:`~ragaudit.metrics.measure.Measure.known_answers`), in registry order."""


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
    return measure_of(spec.family).pure(list(case.ranking), dict(case.grades), relevant, spec.k, case.gain)


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
