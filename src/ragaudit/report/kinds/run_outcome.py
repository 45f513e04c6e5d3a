"""How an eval run went, said first on its page: the command's exit rule
(:mod:`ragaudit.evaluation.outcome`) applied to the report's case records with the ``--max-error-rate``
the run was judged with (the report's ``outcome`` section).

A failed run reads ``run: FAIL - 12 of 84 cases failed (14.3%; --max-error-rate allows 0.0%); the
metrics below score the 9 failed answerable case(s) 0``; a run with tolerated failures ``run complete:
2 of 84 cases failed (2.4%), within --max-error-rate 5.0%; ...``; a clean one ``run complete: 84 cases,
0 failed, 75 of 75 answerable scored``. A report that records no tolerance (written by the Python API or
before the section existed) is judged at the default 0, and the line says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ragaudit.evaluation.outcome import VIAS, recorded_outcome, recorded_tolerance, report_outcome
from ragaudit.report.document import OUTCOME, Block, Paragraph, Section, Verdict
from ragaudit.report.kinds.fields import Fields, count

DEFAULT_TOLERANCE = 0.0
"""``--max-error-rate``'s default: what a report that records no tolerance is judged with."""


@dataclass(frozen=True)
class RunOutcome:
    """What the exit rule says of the run: every reason it failed (none: it did not), the tolerated
    failures, the one-line summary and the tolerance (None: the report records none)."""

    reasons: tuple[str, ...]
    tolerated: str | None
    summary: str
    max_error_rate: float | None

    @classmethod
    def read(cls, report: Fields) -> RunOutcome | None:
        """The rule over the report's ``per_case`` records; a report whose records were left out (the
        command's terminal summary) falls back on the tallies its ``outcome`` section recorded. None
        when neither is there."""
        section = report.opt("outcome")
        record = section if isinstance(section, Mapping) else {}
        tolerance = recorded_tolerance(report.data)
        judged_at = DEFAULT_TOLERANCE if tolerance is None else tolerance
        per_case = report.opt("per_case")
        if isinstance(per_case, list) and (per_case or not record):
            via = record.get("via")
            label = str(record.get("label") or "run")
            outcome = report_outcome(report.data, label, via if via in VIAS else "retriever")
            reasons = outcome.verdict(judged_at)
        else:
            rebuilt = recorded_outcome(record)
            if rebuilt is None:
                return None
            outcome = rebuilt
            problems = record.get("problems")
            reasons = [str(p) for p in problems] if isinstance(problems, list) else []
            if record.get("run_failed") is True and not reasons:
                reasons = ["the run failed (the report records no reason)"]
        return cls(tuple(reasons), outcome.tolerated(judged_at), outcome.summary(), tolerance)


UNRECORDED = " (the report records no --max-error-rate: judged at the default 0)"


def _scored_zero(failed_answerable: int, where: str = "the metrics below") -> str:
    return f"; {where} score the {failed_answerable} failed answerable case(s) 0" if failed_answerable else ""


def run_section(outcome: RunOutcome | None, failed_answerable: int) -> Section | None:
    """The run's outcome, one line: a ``run: FAIL`` verdict when the rule fails it, else ``run
    complete``; with failed cases, that the metrics score the answerable ones 0."""
    if outcome is None:
        return None
    scored_zero = _scored_zero(failed_answerable)
    block: Block
    if outcome.reasons:
        unrecorded = UNRECORDED if outcome.max_error_rate is None else ""
        block = Verdict("run", "fail", "; ".join(outcome.reasons) + scored_zero + unrecorded)
    elif outcome.tolerated:
        block = Paragraph(f"run complete: {outcome.tolerated}{scored_zero}")
    else:
        block = Paragraph(f"run complete: {outcome.summary}")
    return Section(OUTCOME, "Run", (block,))


def counted_verdict(check: str, counts: object) -> Verdict | None:
    """A ``FAIL`` verdict for a run that a report gives only as its ``counts`` (a benchmark's pipeline):
    the exit rule over those tallies at the default tolerance (such a report records none); None when
    the rule does not fail it or the counts are incomplete."""
    if not isinstance(counts, Mapping):
        return None
    tallies = [
        n for k in ("cases", "answerable", "missing", "errors") if (n := count(counts.get(k))) is not None
    ]
    if len(tallies) != 4:
        return None
    cases, answerable, missing, errors = tallies
    extra = count(counts.get("unanswerable_errors")) or 0
    record = {
        "cases": cases,
        "failed": errors + missing + extra,
        "scored": answerable - errors - missing,
        "answerable": answerable,
        "label": check,
        "via": "pipeline",
    }
    outcome = recorded_outcome(record)
    reasons = outcome.verdict(DEFAULT_TOLERANCE) if outcome is not None else []
    if not reasons:
        return None
    return Verdict(
        check, "fail", "; ".join(reasons) + _scored_zero(errors + missing, "its metrics") + UNRECORDED
    )


def failed_runs_section(failed: Sequence[tuple[str, tuple[str, ...], float | None]]) -> Section | None:
    """``run SYSTEM: FAIL - why`` for each compared report whose run failed (``(system, reasons,
    recorded tolerance)``), first on the page: its metrics score its failed cases 0."""
    if not failed:
        return None
    blocks = tuple(
        Verdict(
            f"run {system}",
            "fail",
            "; ".join(reasons)
            + "; its metrics score its failed answerable cases 0"
            + (UNRECORDED if tolerance is None else ""),
        )
        for system, reasons, tolerance in failed
    )
    return Section(OUTCOME, "Runs", blocks)
