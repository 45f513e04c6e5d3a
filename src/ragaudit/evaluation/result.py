"""The typed result of an evaluation and its JSON report form."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ragaudit.artifacts.envelope import envelope, utc_timestamp, write_artifact
from ragaudit.evaluation.holes import DEFAULT_MIN_JUDGED, HoleSummary, judged_k_of_names, summarize
from ragaudit.metrics.policy import Policy
from ragaudit.verdict import TENANT_ISOLATION, CheckVerdict, decide, not_verified

CaseStatus = Literal["ok", "missing", "error", "unanswerable"]


@dataclass(frozen=True)
class RetrievedRecord:
    """One retrieved item as reported: its id, score, tenant and the grade the dataset gives it."""

    chunk_id: str
    score: float | None
    grade: int | None
    relevant: bool
    tenant_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "chunk_id": self.chunk_id,
            "score": self.score,
            "grade": self.grade,
            "relevant": self.relevant,
        }
        if self.tenant_id is not None:
            out["tenant_id"] = self.tenant_id
        return out


@dataclass(frozen=True)
class CaseResult:
    """The outcome of one golden case."""

    id: str
    status: CaseStatus
    answered: bool
    metrics: dict[str, float]
    retrieved: tuple[RetrievedRecord, ...] = ()
    tenant_id: str | None = None
    error: str | None = None
    latency_ms: float | None = None
    duplicates: int = 0
    leaks: tuple[dict[str, Any], ...] = ()
    """Returned chunks the caller's tenant must not see (chunk_id, rank, claimed and caller tenant)."""
    query: str | None = None
    judged: float | None = None
    """Judged@k of the case's top k (``EvalResult.judged_k``); None when it returned nothing or was not measured."""

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "status": self.status,
            "answered": self.answered,
            "answerable": self.status != "unanswerable",
            "metrics": self.metrics,
            "retrieved": [r.to_json() for r in self.retrieved],
        }
        for key in ("query", "tenant_id", "error", "latency_ms", "judged"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        if self.duplicates:
            out["duplicates"] = self.duplicates
        if self.leaks:
            out["leaks"] = list(self.leaks)
        return out


@dataclass(frozen=True)
class Counts:
    cases: int
    answerable: int
    unanswerable: int
    missing: int
    errors: int
    not_in_dataset: int
    """Results in the run for ids the dataset does not have (ignored, listed in ``notes``)."""
    unanswerable_errors: int = 0
    """Unanswerable cases whose query failed (not scored, but failed: the exit rule counts them, and the
    report's ``errors`` lists them with ``answerable: false``). ``errors`` counts the answerable ones."""


def percentile(values: list[float], q: float) -> float:
    """Linear-interpolation percentile (numpy's default) of a non-empty list."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


@dataclass(frozen=True)
class EvalResult:
    """Macro averages over answerable cases, counts, and every case's outcome."""

    metrics: dict[str, float]
    counts: Counts
    per_case: tuple[CaseResult, ...]
    policy: Policy
    dataset: dict[str, Any]
    run: dict[str, Any]
    notes: tuple[str, ...] = ()
    context: Mapping[str, Any] = field(default_factory=dict)
    """Provenance beyond dataset and run: pipeline config and hash, corpus, models, k."""
    created_at: str = field(default_factory=utc_timestamp)
    isolation: CheckVerdict | None = None
    """The tenant-isolation verdict over every returned chunk (:mod:`ragaudit.runner.tenancy`)."""
    judged_k: int | None = None
    """The k of each case's ``judged`` share (None: not measured, e.g. by the fast TREC engine)."""
    min_judged: float = DEFAULT_MIN_JUDGED
    """The judged share under which the report warns (``--min-judged``; :mod:`ragaudit.evaluation.holes`)."""

    @property
    def missing(self) -> list[str]:
        return [c.id for c in self.per_case if c.status == "missing"]

    @property
    def errors(self) -> list[CaseResult]:
        """Every case whose query failed, answerable (status ``error``, scored 0) or not (status
        ``unanswerable``, not scored but failed all the same), in dataset order."""
        return [c for c in self.per_case if c.error is not None]

    def latency(self) -> dict[str, float] | None:
        values = [c.latency_ms for c in self.per_case if c.latency_ms is not None]
        if not values:
            return None
        return {
            "p50": percentile(values, 50),
            "p95": percentile(values, 95),
            "p99": percentile(values, 99),
            "mean": sum(values) / len(values),
        }

    def leaks(self) -> list[dict[str, Any]]:
        """Every cross-tenant leak found, with the case it happened in."""
        return [{"case_id": c.id, **leak} for c in self.per_case for leak in c.leaks]

    def tenant_isolation(self) -> CheckVerdict:
        """The tenant-isolation verdict: the one the run was checked with, else (a result built without a
        tenant check, e.g. by the fast TREC engine) fail on a recorded leak and not verified otherwise."""
        if self.isolation is not None:
            return self.isolation
        leaks = len(self.leaks())
        if leaks:
            return decide(
                TENANT_ISOLATION,
                total=leaks,
                verified=leaks,
                failures=leaks,
                found="cross-tenant chunk(s)",
                unverified_because="",
            )
        return not_verified(
            TENANT_ISOLATION,
            "no tenant check ran on this evaluation (a TREC run file carries no tenant labels)",
        )

    def holes(self, system: str | None = None) -> HoleSummary:
        """How much of the top k is judged, with the warning when too little is (:mod:`ragaudit.evaluation.holes`)."""
        name = system or str(self.run.get("name") or "this run")
        if self.judged_k is None:
            k = judged_k_of_names(self.metrics)
            return summarize(
                name, {}, k, self.min_judged, "the --fast TREC engine keeps no per-case result lists"
            )
        values = {c.id: c.judged for c in self.per_case if c.judged is not None}
        return summarize(name, values, self.judged_k, self.min_judged)

    def failed_problems(self, max_error_rate: float = 0.0) -> list[str]:
        """Why this run failed by the CLI's exit rule (:mod:`ragaudit.evaluation.outcome`): more failed
        cases than ``max_error_rate`` allows, nothing scored, or no case shared with the dataset; each
        with the first failures. Empty when it did not fail."""
        from ragaudit.evaluation.outcome import result_outcome

        outcome = result_outcome(self, str(self.run.get("name") or "run"), "retriever")
        problems = outcome.problems(max_error_rate, "max_error_rate")
        if problems and outcome.failures:
            first = "; ".join(f"{cid}: {reason}" for cid, reason in outcome.failures[:3])
            more = f" (and {len(outcome.failures) - 3} more)" if len(outcome.failures) > 3 else ""
            problems.append(f"first failures: {first}{more}")
        return problems

    def raise_for_errors(self, max_error_rate: float = 0.0) -> EvalResult:
        """Raise :class:`~ragaudit.errors.RunFailedError` (carrying this result) when the run failed by
        the CLI's exit rule (:meth:`failed_problems`); else return this result. A run whose cases failed
        scores them 0: its means are not the system's."""
        problems = self.failed_problems(max_error_rate)
        if problems:
            from ragaudit.errors import RunFailedError

            name = self.run.get("name") or "run"
            raise RunFailedError(f"{name}: " + "; ".join(problems), self)
        return self

    def per_case_values(self, metric: str) -> dict[str, float]:
        """``{case_id: value}`` of one metric over the answerable cases (the basis of paired tests)."""
        return {c.id: c.metrics[metric] for c in self.per_case if metric in c.metrics}

    def to_dict(self) -> dict[str, Any]:
        """The ``eval`` report (NaN where a value is undefined; :meth:`write_json` writes it as ``null``)."""
        from ragaudit.evaluation.slices import tenant_slices

        holes = self.holes()
        warning = holes.warning()
        per_case = [c.to_json() for c in self.per_case]
        return {
            **envelope(
                "eval",
                created_at=self.created_at,
                dataset=self.dataset,
                policy=self.policy.to_dict(),
                context=self.context,
            ),
            "dataset": self.dataset,
            "run": self.run,
            "policy": self.policy.to_dict(),
            "metrics": self.metrics,
            "counts": self.counts.__dict__,
            "latency_ms": self.latency(),
            "missing": self.missing,
            "errors": [
                {"id": c.id, "error": c.error, "answerable": c.status != "unanswerable"} for c in self.errors
            ],
            "security": {
                "leaks": len(self.leaks()),
                "cases_with_leaks": sum(1 for c in self.per_case if c.leaks),
                "records": self.leaks(),
                "isolation": self.tenant_isolation().to_json(),
            },
            "holes": holes.to_json(),
            "tenant_slices": tenant_slices(per_case, list(self.metrics)),
            **dict(self.context),
            "notes": [*self.notes, *([f"incomplete judgments: {warning}"] if warning else [])],
            "per_case": per_case,
        }

    def write_json(self, path: str | Path) -> None:
        """The report as strict JSON (:func:`ragaudit.artifacts.envelope.write_artifact`)."""
        write_artifact(self.to_dict(), path)
