"""Whether a run earned its figures: the outcome of each source a command ran (docs/cli.md, "Exit codes").

A source (an endpoint, a Python retriever, a pipeline, a run file or eval report, a chat endpoint
answering or judging) **fails the run** when:

- its share of failed cases is above the allowed error rate::

      failed share = failed / total     failed = cases with no ranking (or answer): an error, a
                                        timeout, a malformed reply, no tenant, or (run files and
                                        reports) no result for an answerable case of the dataset

- no case could be scored (every case failed, or none is answerable at the relevance threshold);
- (run files and reports) it shares no case id with the dataset;
- it returned **a cross-tenant chunk** (:meth:`SourceOutcome.security_problem`): whatever
  ``--max-error-rate`` says, a leak is a release blocker. (The release gate counts leaks in its
  security gate, against ``max_leaks``, not here.)

One rule for every place that says whether a run passed: the command line's exit code
(:mod:`ragaudit.cli.outcome` prints it), the release gate (``ragaudit gate``) and the pytest plugin's
assertion helpers.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeGuard

from ragaudit.data.run import MISSING

Via = Literal["endpoint", "retriever", "pipeline", "run", "report", "chat", "answers", "judge"]
"""How a source was queried; it picks the flags the fixes name."""


@dataclass(frozen=True)
class SourceOutcome:
    """What one source gave: every case's failure (if any), how many cases were scored, and, for a
    run file, how many of its ids the dataset has."""

    label: str
    via: Via
    total: int
    failures: tuple[tuple[str, str], ...]
    """``(case id, reason)`` of every failed case, in dataset order."""
    scored: int
    answerable: int | None = None
    """Answerable cases (``None`` where answerability does not apply, e.g. answers)."""
    run_ids: int | None = None
    """Run files: how many distinct ids the run has (``None`` for live sources)."""
    shared_ids: int | None = None
    """Run files: how many of them are cases of the dataset."""
    dataset_sample: tuple[str, ...] = ()
    run_sample: tuple[str, ...] = ()
    leaks: int = 0
    """Cross-tenant chunks the source returned (the cases' recorded leaks)."""
    leak_cases: int = 0
    """Cases with at least one."""

    def security_problem(self) -> str | None:
        """``SECURITY: ...`` when the source returned a cross-tenant chunk (``None``: it did not)."""
        if not self.leaks:
            return None
        return (
            f"SECURITY: {self.leaks} cross-tenant chunk(s) returned in {self.leak_cases} case(s) - a "
            "release blocker"
        )

    def summary(self) -> str:
        """How the run went, in one line: cases, failed, scored."""
        unit = {"chat": "answers", "answers": "answers", "judge": "judgements"}.get(self.via, "cases")
        scored = (
            f"{self.scored} scored"
            if self.answerable is None
            else f"{self.scored} of {self.answerable} answerable scored"
        )
        return f"{self.total} {unit}, {len(self.failures)} failed, {scored}"

    @property
    def rate(self) -> float:
        return len(self.failures) / self.total if self.total else 0.0

    def tolerated(self, max_error_rate: float, option: str = "--max-error-rate") -> str | None:
        """``2 of 84 cases failed (2.4%), within --max-error-rate 5.0%`` when some cases failed but no
        more than ``max_error_rate`` allows (``None``: none failed, or too many)."""
        if not self.failures or self.rate > max_error_rate:
            return None
        return (
            f"{len(self.failures)} of {self.total} cases failed ({self.rate:.1%}), within {option} "
            f"{max_error_rate:.1%}"
        )

    def verdict(self, max_error_rate: float, option: str = "--max-error-rate") -> list[str]:
        """Every reason the run failed: the security problem first, then :meth:`problems` (empty: it
        did not fail)."""
        security = self.security_problem()
        return [*([security] if security else []), *self.problems(max_error_rate, option)]

    def record(self, max_error_rate: float) -> dict[str, Any]:
        """The report's ``outcome`` section: the tolerance the run was judged with and what the rule
        found (``run_failed``, every reason in ``problems``), so a page says it without the command."""
        reasons = self.verdict(max_error_rate)
        return {
            "max_error_rate": max_error_rate,
            "via": self.via,
            "label": self.label,
            "cases": self.total,
            "failed": len(self.failures),
            "answerable": self.answerable,
            "scored": self.scored,
            "leaks": self.leaks,
            "run_failed": bool(reasons),
            "problems": reasons,
        }

    def problems(self, max_error_rate: float, option: str = "--max-error-rate") -> list[str]:
        """Why this source fails the run (empty when it does not); ``option`` names the tolerance as the
        caller spells it (``max_error_rate=`` for the pytest helpers)."""
        out: list[str] = []
        if self.run_ids is not None and self.shared_ids == 0:
            what = "has no result at all" if self.run_ids == 0 else "shares no case id with the dataset"
            ids = f"its ids: {_sample(self.run_sample)}; " if self.run_sample else ""
            return [  # every other problem follows from this one
                f"the {_noun(self.via)} {what} ({ids}the dataset's: {_sample(self.dataset_sample)}); "
                "was it made for another --dataset or --split?"
            ]
        if self.failures and self.rate > max_error_rate:
            out.append(
                f"{len(self.failures)} of {self.total} cases failed ({self.rate:.1%}; {option} "
                f"allows {max_error_rate:.1%})"
            )
        if self.scored == 0:
            if self.answerable == 0:
                out.append(
                    "no case could be scored: no case of the dataset is answerable (none has a relevant "
                    "item at --relevance-threshold); check the threshold and the labels"
                )
            elif self.total == 0:
                out.append("no case could be scored: the dataset has no case")
            else:
                out.append(f"no case could be scored: every {_unit(self.via)} failed or is missing")
        return out


def _noun(via: Via) -> str:
    return {"run": "--run file", "report": "--report"}.get(via, via)


def _unit(via: Via) -> str:
    return {"chat": "answer", "answers": "answer", "judge": "judgement"}.get(via, "answerable case")


def _sample(ids: Sequence[str]) -> str:
    return ", ".join(repr(i) for i in ids[:3]) + (" ..." if len(ids) > 3 else "")


_CASE_FIELDS = ("id", "status", "error", "leaks", "answered")


def _fields(case: Any) -> tuple[Any, ...]:
    """A case's id, status, error, leaks and answered flag, from a per-case dict or a CaseResult (one
    lookup each: an outcome reads every case of a 100,000-case report)."""
    if isinstance(case, dict):
        get = case.get
        return get("id"), get("status"), get("error"), get("leaks"), get("answered")
    if isinstance(case, Mapping):
        return tuple(case.get(name) for name in _CASE_FIELDS)
    return tuple(getattr(case, name, None) for name in _CASE_FIELDS)


def case_rules(status: object, answered: object, error: object) -> tuple[str | None, bool, bool, bool]:
    """The rules of one case, from its ``status`` (``ok``, ``missing``, ``unanswerable``), whether the
    run answered it and its error: ``(why it failed or None, answerable, scored, in the run)``. A case
    fails when it errored (answerable or not) or, being answerable, is missing from the run."""
    failed = MISSING if status == "missing" else None if error is None else str(error)
    answerable = status != "unanswerable"
    present = status != "missing" and (answerable or bool(answered) or error is not None)
    return failed, answerable, status == "ok", present


def counted_outcome(
    label: str,
    via: Via,
    counts: tuple[int, int, int, int],
    failures: Sequence[tuple[str, str]],
    *,
    not_in_dataset: int = 0,
    dataset_sample: Sequence[str] = (),
    run_sample: Sequence[str] = (),
    leaks: tuple[int, int] = (0, 0),
) -> SourceOutcome:
    """The outcome of cases tallied under :func:`case_rules`: ``counts`` is ``(cases, answerable,
    scored, in the run)``, ``leaks`` ``(cross-tenant chunks, cases with one)``; with ``via``
    ``run``/``report`` the shared ids are counted (``not_in_dataset``: run ids that are not cases)."""
    total, answerable, scored, in_run = counts
    from_file = via in ("run", "report")
    return SourceOutcome(
        label,
        via,
        total,
        tuple(failures),
        scored,
        answerable,
        in_run + not_in_dataset if from_file else None,
        in_run if from_file else None,
        tuple(dataset_sample),
        tuple(run_sample),
        *leaks,
    )


def eval_outcome(
    per_case: Iterable[Any],
    label: str,
    via: Via,
    *,
    not_in_dataset: int = 0,
    run_sample: Sequence[str] = (),
) -> SourceOutcome:
    """The outcome of an evaluation from its per-case entries (:class:`CaseResult` objects or the
    ``per_case`` dicts of an eval report), each case under :func:`case_rules`."""
    total = scored = answerable = in_run = leaks = leak_cases = 0
    failures: list[tuple[str, str]] = []
    sample: list[str] = []
    for case in per_case:
        cid, status, error, found, answered = _fields(case)
        total += 1
        if found:
            count = len(found) if isinstance(found, (list, tuple)) else 0
            leaks += count
            leak_cases += count > 0
        if len(sample) < 3:
            sample.append(str(cid))
        failed, is_answerable, is_scored, present = case_rules(status, answered, error)
        answerable += is_answerable
        scored += is_scored
        in_run += present
        if failed is not None:
            failures.append((str(cid), failed))
    return counted_outcome(
        label,
        via,
        (total, answerable, scored, in_run),
        failures,
        not_in_dataset=not_in_dataset,
        dataset_sample=sample,
        run_sample=run_sample,
        leaks=(leaks, leak_cases),
    )


def result_outcome(result: Any, label: str, via: Via, run_sample: Sequence[str] = ()) -> SourceOutcome:
    """:func:`eval_outcome` of an :class:`~ragaudit.evaluation.result.EvalResult`."""
    return eval_outcome(
        result.per_case, label, via, not_in_dataset=result.counts.not_in_dataset, run_sample=run_sample
    )


def report_outcome(report: Mapping[str, Any], label: str, via: Via) -> SourceOutcome:
    """:func:`eval_outcome` of an eval report dict (``EvalResult.to_dict()`` or its JSON, parsed)."""
    counts = report.get("counts")
    extra = counts.get("not_in_dataset", 0) if isinstance(counts, Mapping) else 0
    per_case = report.get("per_case")
    return eval_outcome(
        per_case if isinstance(per_case, list) else [], label, via, not_in_dataset=int(extra or 0)
    )


def failures_outcome(
    outcomes: Mapping[str, str | None] | Iterable[tuple[str, str | None]], label: str, via: Via
) -> SourceOutcome:
    """The outcome of ``(case id, error or None)`` pairs (answers, judgements, run cases): a case is
    scored when it has no error."""
    pairs = list(outcomes.items()) if isinstance(outcomes, Mapping) else list(outcomes)
    failures = tuple((cid, error) for cid, error in pairs if error is not None)
    return SourceOutcome(label, via, len(pairs), failures, len(pairs) - len(failures))


def run_outcome(run: Any, case_ids: Sequence[str], label: str, via: Via) -> SourceOutcome:
    """The outcome of a :class:`~ragaudit.data.run.Run` over ``case_ids`` (no relevance involved): a
    case fails when it errored or the run lacks it; with ``via`` ``run`` the shared ids are counted."""
    cases = run.cases
    pairs = [(cid, cases[cid].error if cid in cases else MISSING) for cid in case_ids]
    outcome = failures_outcome(pairs, label, via)
    if via != "run":
        return outcome
    wanted = set(case_ids)
    return SourceOutcome(
        label,
        via,
        outcome.total,
        outcome.failures,
        outcome.scored,
        run_ids=len(cases),
        shared_ids=sum(1 for cid in cases if cid in wanted),
        dataset_sample=tuple(case_ids[:3]),
        run_sample=tuple(list(cases)[:3]),
    )


def with_outcome(report: Mapping[str, Any], record: Mapping[str, Any]) -> dict[str, Any]:
    """``report`` with its ``outcome`` section (:meth:`SourceOutcome.record`) placed after ``counts``."""
    out: dict[str, Any] = {}
    for key, value in report.items():
        if key != "outcome":
            out[key] = value
        if key == "counts":
            out["outcome"] = dict(record)
    if "outcome" not in out:
        out["outcome"] = dict(record)
    return out


VIAS: tuple[Via, ...] = ("endpoint", "retriever", "pipeline", "run", "report", "chat", "answers", "judge")


def recorded_outcome(record: Mapping[str, Any]) -> SourceOutcome | None:
    """The :class:`SourceOutcome` of a report's ``outcome`` section from its tallies (its failed cases
    unnamed: the report's ``errors`` and ``missing`` name them), for a reader without the case records;
    ``None`` when the section lacks a tally."""
    tallies = [n for k in ("cases", "failed", "scored") if _tally(n := record.get(k))]
    if len(tallies) != 3:
        return None
    total, failed, scored = tallies
    via = record.get("via")
    answerable = record.get("answerable")
    return SourceOutcome(
        str(record.get("label") or "run"),
        via if via in VIAS else "retriever",
        total,
        (("", ""),) * failed,
        scored,
        answerable if _tally(answerable) else None,
    )


def _tally(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def recorded_tolerance(report: Mapping[str, Any]) -> float | None:
    """The ``--max-error-rate`` an eval report's run was judged with (its ``outcome`` section), or None
    when it records none (a report of the Python API, or written before the section existed)."""
    section = report.get("outcome")
    value = section.get("max_error_rate") if isinstance(section, Mapping) else None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        return None
    return float(value)


def failed_run(
    report: Mapping[str, Any], label: str, max_error_rate: float | None = None
) -> dict[str, Any] | None:
    """``{system, max_error_rate, problems}`` when the eval ``report``'s run fails the rule (at
    ``max_error_rate``; None: its recorded tolerance, else the default 0), from its case records; None
    when it does not."""
    tolerance = recorded_tolerance(report) if max_error_rate is None else max_error_rate
    outcome = report_outcome(report, label, "report")
    reasons = outcome.verdict(0.0 if tolerance is None else tolerance)
    return {"system": label, "max_error_rate": tolerance, "problems": reasons} if reasons else None
