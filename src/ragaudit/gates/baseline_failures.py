"""The cases that failed in a ``--baseline`` are left out of the regression check.

A failed case (an error, or a case the run has no result for: ``ragaudit eval``'s rule,
:mod:`ragaudit.evaluation.outcome`) scores 0. Against a baseline whose run failed on some cases, any
candidate "improves" on them, and that gain can outweigh a significant regression on every case the
baseline did answer. The gate therefore pairs the candidate with the baseline only on the cases the
baseline's run answered, and says how many it left out. A candidate's own failed cases stay in: they
are its regression (and the operations gate fails on them too).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragaudit.evaluation.compare import LoadedReport
from ragaudit.evaluation.outcome import report_outcome


def _without(report: LoadedReport, ids: set[str]) -> LoadedReport:
    cases = report.data.get("per_case")
    kept = (
        [c for c in cases if not (isinstance(c, Mapping) and str(c.get("id")) in ids)]
        if isinstance(cases, list)
        else cases
    )
    data: dict[str, Any] = {**report.data, "per_case": kept}
    return LoadedReport(report.label, report.path, data)


def answered_by_baseline(
    baseline: LoadedReport, report: LoadedReport
) -> tuple[LoadedReport, LoadedReport, str | None]:
    """``(baseline, report, note)`` with the cases that failed in the baseline's run removed from both
    (``note``: what was left out and why; ``None`` and the reports unchanged when none failed)."""
    failures = report_outcome(baseline.data, f"baseline {baseline.path}", "report").failures
    failed = {case for case, _ in failures}
    if not failed:
        return baseline, report, None
    sample = ", ".join(sorted(failed)[:3]) + (" ..." if len(failed) > 3 else "")
    note = (
        f"{len(failed)} case(s) failed in the baseline {baseline.path} (errors or missing: {sample}): a "
        "failed case scores 0, so against it any candidate looks better; they are left out of the paired "
        "check, which compares the cases the baseline answered"
    )
    return _without(baseline, failed), _without(report, failed), note
