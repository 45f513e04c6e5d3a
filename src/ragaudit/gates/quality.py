"""The quality gate: every floored metric's mean reaches its floor, and no metric regressed against the
baseline by more than ``max_regression`` *and* significantly (paired randomization test, Holm-corrected
across the checked metrics, at ``alpha``; :func:`ragaudit.evaluation.compare.compare_reports`). A drop
beyond the tolerance that is not significant is reported, not counted: on a small golden set it is as
likely noise as a regression. A mean is checked against its cases (a number written beside them earns
nothing), and an IN-SAMPLE report (a fitted stage scored on its training cases) is not verified."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ragaudit.evaluation.compare import LoadedReport, compare_reports, depth_note, unpaired_notes
from ragaudit.evaluation.integrity import case_inconsistencies, unlisted_against
from ragaudit.gates.baseline_failures import answered_by_baseline
from ragaudit.gates.policy import GatePolicy
from ragaudit.gates.result import GateResult, floor_failure, judge_drop


def _floors(report: LoadedReport, floors: Mapping[str, float]) -> tuple[list[str], dict[str, Any]]:
    findings: list[str] = []
    numbers: dict[str, Any] = {}
    metrics = report.data.get("metrics", {})
    for metric, floor in floors.items():
        if metric not in metrics:
            findings.append(
                f"{metric} has a floor but the report has no {metric} (it has {', '.join(metrics) or 'none'}); "
                f"re-run 'ragaudit eval' with --metrics including {metric}"
            )
            continue
        raw = metrics[metric]
        value = float(raw) if isinstance(raw, (int, float)) else None
        numbers[metric] = {"value": value, "floor": floor}
        per_case = report.per_case(metric)
        unearned = _unearned_mean(report, metric, value, per_case)
        if value is not None and not math.isfinite(value) and unearned:  # not "no answerable case"
            failure: str | None = unearned
        else:
            failure = floor_failure(metric, value, floor, per_case) or unearned
        if failure:
            findings.append(failure)
    return findings, numbers


def _unearned_mean(
    report: LoadedReport, metric: str, value: float | None, per_case: Mapping[str, float]
) -> str | None:
    """Why a report's mean of ``metric`` is not its cases' mean (a report edited by hand or corrupt), or
    ``None`` when it is: a floor is met by the cases, never by a number written beside them."""
    if value is None or not math.isfinite(value):
        if not per_case:
            return None
        mean = math.fsum(per_case.values()) / len(per_case)
        return (
            f"{metric}: the report's mean is {value!r}, not a number, but its {len(per_case)} answerable cases "
            f"average {mean:.4f}: it was edited or is corrupt; gate the report 'ragaudit eval' wrote"
        )
    answerable = sum(
        1
        for case in report.data.get("per_case", [])
        if isinstance(case, Mapping) and case.get("status") != "unanswerable"
    )
    if not per_case:
        return (
            f"{metric}: the report has no per-case values to check its mean against ({answerable} "
            "answerable case(s)); gate a report written by 'ragaudit eval'"
        )
    mean = math.fsum(per_case.values()) / len(per_case)
    if abs(mean - value) <= 1e-9 * max(1.0, abs(value)):
        return None
    return (
        f"{metric}: the report says {value:.4f} but its {len(per_case)} answerable cases average {mean:.4f}: "
        "it was edited or is corrupt; gate the report 'ragaudit eval' wrote"
    )


def _regressions(
    report: LoadedReport,
    baseline: LoadedReport,
    policy: GatePolicy,
    resamples: int,
    seed: int,
) -> tuple[list[str], list[str], list[dict[str, Any]]]:
    tolerance = policy.max_regression if policy.max_regression is not None else 0.0
    shared = [m for m in baseline.metric_names() if m in report.metric_names()]
    wanted = list(policy.regression_metrics or policy.floors or shared)
    missing = [m for m in wanted if m not in shared]
    metrics = [m for m in wanted if m in shared]
    findings = [
        f"{m} cannot be compared: it is not in both the report and the baseline; "
        "evaluate both with the same --metrics"
        for m in missing
    ]
    notes: list[str] = []
    if not metrics:
        if not missing:  # a regression check that compared nothing is not a met one
            findings.append(
                f"no metric in common with the baseline (report: {', '.join(report.metric_names()) or 'none'}; "
                f"baseline: {', '.join(baseline.metric_names()) or 'none'}): the regression check compared "
                "nothing; evaluate both with the same --metrics"
            )
        return findings, notes, []
    answered, paired, left_out = answered_by_baseline(baseline, report)  # its failed cases score 0
    result = compare_reports([answered, paired], answered, metrics, policy.alpha, resamples, seed)
    if (same := _same_run(report, baseline)) is not None:  # compared with itself: nothing compared
        return [*findings, same], notes, []
    notes += [left_out] if left_out else []
    rows = result["comparisons"]
    notes += unpaired_notes(answered, [paired], metrics)  # what the paired check could not see
    notes += [depth] if (depth := depth_note([baseline, report], metrics)) else []
    for c in rows:
        if not c["n"]:  # a regression check that paired nothing is not a met one
            findings.append(
                f"{c['metric']}: no case both the baseline answered and the report scored: the regression "
                "check compared nothing; give the report of a released run whose cases did not fail"
            )
            continue
        correction = f"Holm over {len(rows)} metrics"
        finding, note = judge_drop(c, c["metric"], correction, "the tolerance", tolerance, policy.alpha)
        findings += [finding] if finding else []
        notes += [note] if note else []
    return findings, notes, rows


def _same_run(report: LoadedReport, baseline: LoadedReport) -> str | None:
    """Why the baseline is the report itself (the same file, or a copy: the same ``created_at`` and
    means), so the regression check would compare the candidate with itself; ``None`` when it is not."""
    made = report.data.get("created_at")
    same_file = Path(report.path).resolve() == Path(baseline.path).resolve()
    copy = made is not None and made == baseline.data.get("created_at")
    if not same_file and not (copy and report.data.get("metrics") == baseline.data.get("metrics")):
        return None
    return (
        f"the baseline {baseline.path} is this report itself (created {made}): the regression check would "
        "compare the candidate with itself; give the report of the released system as --baseline"
    )


def _in_sample(report: LoadedReport, policy: GatePolicy, baseline: LoadedReport | None) -> GateResult | None:
    """NOT VERIFIED when the report is IN-SAMPLE (a fitted stage scored on the cases it was fitted on)
    and there is a floor or a baseline to check: such figures cannot earn a pass."""
    from ragaudit.artifacts.in_sample import HOLDOUT_FIX, in_sample_line, is_in_sample

    if not is_in_sample(report.data) or (not policy.floors and baseline is None):
        return None
    return GateResult(
        "quality",
        "not_verified",
        "quality NOT VERIFIED: the report is IN-SAMPLE, a floor met on the cases a stage was fitted on "
        "says nothing about new queries",
        (str(in_sample_line(report.data)),),
        (HOLDOUT_FIX,),
        {"in_sample": dict(report.data.get("in_sample") or {})},
    )


def _inconsistent(problems: Sequence[str], in_sample: GateResult) -> GateResult | None:
    """An IN-SAMPLE report whose case records do not account for its cases fails (not merely not
    verified): this gate is where a report's inconsistent case records fail the verdict."""
    if not problems:
        return None
    notes = (*in_sample.findings, *in_sample.notes)
    return GateResult("quality", "fail", "; ".join(problems), tuple(problems), notes, in_sample.numbers)


def quality_gate(
    report: LoadedReport,
    policy: GatePolicy,
    baseline: LoadedReport | None = None,
    *,
    resamples: int = 10_000,
    seed: int = 0,
    case_problems: Sequence[str] | None = None,
) -> GateResult:
    """Floors and regressions (see the module docstring), and the report's case records: they must
    account for its cases (:func:`~ragaudit.evaluation.integrity.case_inconsistencies`; pass
    ``case_problems`` when already worked out). This gate is the one that reports and fails on them."""
    unearned = _in_sample(report, policy, baseline)
    problems = case_inconsistencies(report.data) if case_problems is None else list(case_problems)
    if unearned is not None:
        return _inconsistent(problems, unearned) or unearned
    findings, floor_numbers = _floors(report, policy.floors)
    findings += problems  # figures its case records do not account for (the one gate that reports them)
    notes: list[str] = []
    comparisons: list[dict[str, Any]] = []
    if baseline is not None:
        if policy.max_regression is None:
            notes.append("no max_regression in the policy: any significant drop against the baseline counts")
        more, regression_notes, comparisons = _regressions(report, baseline, policy, resamples, seed)
        findings += more + [p for p in (unlisted_against(report.data, baseline.data),) if p]
        findings += [f"baseline {baseline.path}: {p}" for p in case_inconsistencies(baseline.data)]
        notes += regression_notes
    elif policy.max_regression is not None:
        notes.append("no --baseline given: the regression check did not run")
    numbers = {
        "floors": floor_numbers,
        "baseline": baseline.path if baseline else None,
        "comparisons": [
            {
                k: c[k]
                for k in (
                    "metric",
                    "baseline_mean",
                    "system_mean",
                    "delta",
                    "p_value_corrected",
                    "significant",
                )
            }
            for c in comparisons
        ],
    }
    vacuous = [m for m, floor in policy.floors.items() if floor <= 0]
    notes += [f"{m} floor 0 cannot fail: it checks nothing" for m in vacuous]
    regression = baseline is not None and (policy.max_regression or 0.0) < 1
    if baseline is not None and not regression:
        notes.append(
            "max_regression 1 cannot fail: no mean in [0, 1] drops by more; the regression check checks nothing"
        )
    floors = len(policy.floors) - len(vacuous)
    if not findings and not floors and not regression:
        what = (
            "no floors and no baseline"
            if not policy.floors and baseline is None
            else "only thresholds that cannot fail"
        )
        return GateResult("quality", "skip", f"{what}: nothing to check", notes=tuple(notes), numbers=numbers)
    checked = f"{floors} floor(s)" + (f", {len(comparisons)} paired comparison(s)" if regression else "")
    if findings:
        return GateResult(
            "quality",
            "fail",
            f"{len(findings)} problem(s) in {checked}",
            tuple(findings),
            tuple(notes),
            numbers,
        )
    return GateResult("quality", "pass", f"{checked} met", (), tuple(notes), numbers)
