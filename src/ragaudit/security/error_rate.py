"""The error rate of a run, by kind of failure, and a gate on it.

::

    rate = failed / total        (total = every case asked for; failed = cases without a ranking)

A case fails when the retriever raised, timed out, answered garbage, or was never asked (no tenant);
for an evaluation, a case of the dataset the run has no result for (``missing``) fails too. Each
failure is put in one kind from its recorded reason (:func:`classify_error`), so a report can say
"37 timeouts, 2 malformed responses" and a CI job can gate on :func:`check_error_rate`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ragaudit.data.run import MISSING, CaseRun, Run

ERROR_KINDS = (
    "timeout",
    "connection",
    "http-5xx",
    "http-429",
    "http-4xx",
    "malformed-response",
    "no-tenant",
    "missing",
    "other",
)
_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (  # first match wins: status codes before words
    ("missing", re.compile(r"^missing: ")),
    ("no-tenant", re.compile(r"^(no tenant|retrieval request refused)", re.I)),
    ("http-429", re.compile(r"^(\S+ answered )?HTTP 429\b")),  # "URL answered HTTP n": a chat endpoint
    ("http-5xx", re.compile(r"^(\S+ answered )?HTTP 5\d\d\b")),
    ("http-4xx", re.compile(r"^(\S+ answered )?HTTP 4\d\d\b")),
    ("timeout", re.compile(r"timeout|timed out|no response within|did not answer within|TimeoutError", re.I)),
    (
        "connection",
        re.compile(
            r"connection (failed|refused|reset)|Connection\w*Error|ConnectError|ReadError|reset by peer|"
            r"cannot reach",
            re.I,
        ),
    ),
    (
        "malformed-response",
        re.compile(
            r"not valid JSON|not JSON|malformed reply|must be (a|an) |has no field|has no '|wrong shape|expected a list|"
            r"response must be|result #\d+",
            re.I,
        ),
    ),
)
EXAMPLES_PER_KIND = 5


def classify_error(reason: str) -> str:
    """The kind of a recorded failure reason (one of :data:`ERROR_KINDS`)."""
    for kind, pattern in _RULES:
        if pattern.search(reason):
            return kind
    return "other"


@dataclass(frozen=True)
class ErrorRate:
    """How many of ``total`` cases failed, by kind, with a few example case ids and reasons per kind."""

    total: int
    failed: int
    by_kind: Mapping[str, int] = field(default_factory=dict)
    examples: Mapping[str, tuple[tuple[str, str], ...]] = field(default_factory=dict)
    retried: int = 0
    """Cases that needed more than one attempt (whether or not they succeeded in the end)."""

    @property
    def rate(self) -> float:
        """``failed / total`` (0.0 for an empty run)."""
        return self.failed / self.total if self.total else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "total": self.total,
            "failed": self.failed,
            "rate": self.rate,
            "retried": self.retried,
            "by_kind": dict(self.by_kind),
            "examples": {
                kind: [{"case_id": cid, "reason": reason} for cid, reason in pairs]
                for kind, pairs in self.examples.items()
            },
        }


def error_rate_of(outcomes: Iterable[tuple[str, str | None, int]]) -> ErrorRate:
    """The error rate of ``(case_id, error or None, attempts)`` triples."""
    total = failed = retried = 0
    kinds: Counter[str] = Counter()
    examples: dict[str, list[tuple[str, str]]] = {}
    for case_id, error, attempts in outcomes:
        total += 1
        retried += attempts > 1
        if error is None:
            continue
        failed += 1
        kind = classify_error(error)
        kinds[kind] += 1
        shown = examples.setdefault(kind, [])
        if len(shown) < EXAMPLES_PER_KIND:
            shown.append((case_id, error))
    ordered = {k: kinds[k] for k in ERROR_KINDS if kinds[k]}
    return ErrorRate(total, failed, ordered, {k: tuple(examples[k]) for k in ordered}, retried)


def run_error_rate(run: Run | Mapping[str, CaseRun], expected: Iterable[str] | None = None) -> ErrorRate:
    """The error rate of a run; with ``expected`` case ids, a case the run lacks counts as ``missing``."""
    cases = run.cases if isinstance(run, Run) else run
    wanted = list(dict.fromkeys(expected)) if expected is not None else list(cases)
    return error_rate_of(
        (cid, cases[cid].error, cases[cid].attempts) if cid in cases else (cid, MISSING, 0) for cid in wanted
    )


def report_error_rate(report: Mapping[str, Any]) -> ErrorRate:
    """The error rate of an evaluation report (``EvalResult.to_dict()`` or its JSON file, parsed)."""
    per_case = report.get("per_case", [])
    outcomes = []
    for case in per_case if isinstance(per_case, list) else []:
        if not isinstance(case, Mapping):
            continue
        status = case.get("status")
        error = case.get("error") if status == "error" else None
        if status == "missing":
            error = MISSING
        elif status == "error" and not isinstance(error, str):
            error = "error"
        outcomes.append((str(case.get("id")), error, 1))
    return error_rate_of(outcomes)


@dataclass(frozen=True)
class ErrorGate:
    """The outcome of :func:`check_error_rate`."""

    passed: bool
    rate: float
    max_rate: float
    message: str


def check_error_rate(summary: ErrorRate, max_rate: float) -> ErrorGate:
    """Pass when ``summary.rate <= max_rate`` (``max_rate`` in [0, 1]; 0 tolerates no failure)."""
    if not 0.0 <= max_rate <= 1.0:
        raise ValueError(f"max error rate must be within [0, 1] (got {max_rate})")
    passed = summary.rate <= max_rate
    kinds = ", ".join(f"{n} {k}" for k, n in summary.by_kind.items())
    verdict = "within" if passed else "above"
    message = (
        f"error rate {summary.rate:.2%} ({summary.failed} of {summary.total} cases failed"
        + (f": {kinds}" if kinds else "")
        + f") is {verdict} the limit {max_rate:.2%}"
    )
    return ErrorGate(passed, summary.rate, max_rate, message)
