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

from collections.abc import Mapping
from dataclasses import dataclass

from ragaudit.evaluation.outcome import VIAS, recorded_outcome, report_outcome
from ragaudit.report.document import OUTCOME, Block, Paragraph, Section, Verdict
from ragaudit.report.kinds.fields import Fields, number

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
        tolerance = number(record.get("max_error_rate"))
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


def run_section(outcome: RunOutcome | None, failed_answerable: int) -> Section | None:
    """The run's outcome, one line: a ``run: FAIL`` verdict when the rule fails it, else ``run
    complete``; with failed cases, that the metrics score the answerable ones 0."""
    if outcome is None:
        return None
    scored_zero = (
        f"; the metrics below score the {failed_answerable} failed answerable case(s) 0"
        if failed_answerable
        else ""
    )
    unrecorded = (
        " (the report records no --max-error-rate: judged at the default 0)"
        if outcome.max_error_rate is None and (outcome.reasons or outcome.tolerated)
        else ""
    )
    block: Block
    if outcome.reasons:
        block = Verdict("run", "fail", "; ".join(outcome.reasons) + scored_zero + unrecorded)
    elif outcome.tolerated:
        block = Paragraph(f"run complete: {outcome.tolerated}{scored_zero}")
    else:
        block = Paragraph(f"run complete: {outcome.summary}")
    return Section(OUTCOME, "Run", (block,))
