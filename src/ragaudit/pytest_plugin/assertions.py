"""Assertion helpers whose failures read as a report: :func:`assert_floor`, :func:`assert_floors`,
:func:`assert_no_leaks`, :func:`assert_no_errors`, :func:`assert_tenant_audit_clean`. A floor is judged
in the words of ``ragaudit gate`` (:func:`ragaudit.gates.result.floor_failure`), and is not met by a
run whose cases failed or by an IN-SAMPLE result."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ragaudit.evaluation.result import EvalResult
    from ragaudit.security.tenant_audit import TenantAudit


def assert_tenant_audit_clean(audit: TenantAudit, *, max_error_rate: float = 0.0) -> None:
    """Fail unless the audit's verdict is ``clean``: no foreign chunk served to any tenant, and every
    request answered (within ``max_error_rate``); the message is the audit's own summary."""
    verdict = audit.verdict(max_error_rate)
    if verdict != "clean":
        from ragaudit.report.terminal import render_terminal

        summary = render_terminal(audit.to_dict(max_error_rate))
        raise AssertionError(f"tenant audit: {verdict}\n{summary}")


def _floor_message(result: EvalResult, metric: str, floor: float) -> str | None:
    from ragaudit.gates.result import floor_failure
    from ragaudit.metrics.names import parse_metric

    name = parse_metric(metric).name
    value, per_case = result.metrics.get(name), result.per_case_values(name)
    if value is None and not per_case:
        return f"{name} was not computed; add it to ragaudit_metrics"
    return floor_failure(name, value, floor, per_case)


def _report_floor_messages(report: Mapping[str, Any], floors: Mapping[str, float]) -> list[str]:
    """The quality gate's findings on a report dict with these floors: each missed floor, a mean that is
    not its cases' mean, case records that do not account for the run (a report edited by hand).
    IN-SAMPLE is told by :func:`_in_sample`, so the gate sees the report without that section."""
    from ragaudit.evaluation.compare import LoadedReport
    from ragaudit.evaluation.in_sample_integrity import in_sample_inconsistency
    from ragaudit.gates.checks import quality_gate
    from ragaudit.gates.policy import GatePolicy
    from ragaudit.metrics.names import parse_metric

    data = {key: value for key, value in report.items() if key != "in_sample"}
    policy = GatePolicy(floors={parse_metric(m).name: float(f) for m, f in floors.items()})
    findings = quality_gate(LoadedReport("report", "<report>", data), policy).findings
    stripped = in_sample_inconsistency(data)  # what taking the section out here makes the gate say
    edited = in_sample_inconsistency(report)  # the report's own section, as it came
    return [f for f in findings if f != stripped] + ([edited] if edited else [])


def _run_failed(result: EvalResult | Mapping[str, Any], max_error_rate: float) -> list[str]:
    """Why the run behind ``result`` failed (the rule of ``ragaudit eval``'s exit code,
    :mod:`ragaudit.evaluation.outcome`): failed cases (errors, and cases with no result) above
    ``max_error_rate``, nothing scored, or no case shared with the dataset. Empty when it did not."""
    from ragaudit.evaluation.outcome import report_outcome, result_outcome
    from ragaudit.evaluation.result import EvalResult
    from ragaudit.gates.result import WORST

    outcome = (
        result_outcome(result, "eval_result", "pipeline")
        if isinstance(result, EvalResult)
        else report_outcome(result, "report", "report")
    )
    problems = outcome.problems(max_error_rate, "max_error_rate")
    if problems and outcome.failures:
        shown = "; ".join(f"{cid}: {reason}" for cid, reason in outcome.failures[:WORST])
        problems.append(f"first failures: {shown} (a floor met by a run whose cases failed is not earned)")
    return problems


def assert_floor(
    result: EvalResult | Mapping[str, Any], metric: str, floor: float, *, max_error_rate: float = 0.0
) -> None:
    """Fail with ``"nDCG@10 0.61 < floor 0.70; worst queries: ..."`` when the mean misses ``floor``, and
    when the run failed: more failed cases than ``max_error_rate`` tolerates (default 0), or nothing
    scored (as ``ragaudit eval`` exits 1 then)."""
    __tracebackhide__ = True
    assert_floors(result, {metric: floor}, max_error_rate=max_error_rate)


def assert_floors(
    result: EvalResult | Mapping[str, Any], floors: Mapping[str, float], *, max_error_rate: float = 0.0
) -> None:
    """Check several floors at once; the failure lists every metric that missed its floor, and why the
    run failed when it did (:func:`assert_floor`)."""
    __tracebackhide__ = True
    if isinstance(result, Mapping):  # a report's floors are checked as 'ragaudit gate' checks them
        messages = _report_floor_messages(result, floors)
    else:
        messages = [m for metric, floor in floors.items() if (m := _floor_message(result, metric, floor))]
    messages += _run_failed(result, max_error_rate)
    messages += _in_sample(result)
    if messages:
        raise AssertionError("\n".join([*messages, *_id_forms(result)]))


def _id_forms(result: EvalResult | Mapping[str, Any]) -> list[str]:
    """The hint that retrieved ids missed judged ids only by their form (NFC/NFD, width, case), shown with
    a failed floor (:mod:`ragaudit.evaluation.id_forms`)."""
    from ragaudit.evaluation.id_forms import id_form_note
    from ragaudit.evaluation.result import EvalResult

    notes = result.notes if isinstance(result, EvalResult) else result.get("notes", [])
    note = id_form_note(str(n) for n in notes)
    return [f"hint: {note}"] if note else []


def _in_sample(result: EvalResult | Mapping[str, Any]) -> list[str]:
    """Why floors met by an IN-SAMPLE result are not earned (a fitted stage scored on the cases it was
    fitted on; ``ragaudit gate`` calls its quality gate NOT VERIFIED then), or nothing."""
    from ragaudit.artifacts.in_sample import in_sample_line, is_in_sample
    from ragaudit.evaluation.result import EvalResult

    report = result.context if isinstance(result, EvalResult) else result
    if not is_in_sample(report):
        return []
    return [
        f"{in_sample_line(report) or 'IN-SAMPLE'} (a floor met on the cases a stage was fitted on is not earned)"
    ]


def assert_no_leaks(
    result: EvalResult | Mapping[str, Any], *, allow_unverified: bool = False, max_error_rate: float = 0.0
) -> None:
    """Fail when any retrieved chunk belonged to another tenant than the one that asked, when the run
    failed (more failed cases than ``max_error_rate`` tolerates, or nothing scored: a service that did
    not answer showed no leak because it showed nothing; ``allow_unverified`` does not waive that), and
    when some returned chunk's owner could not be established from the corpus (e.g. no corpus was
    given: a response's ``tenant_id`` is a claim) unless ``allow_unverified``: no leak found is not no leak.

    Passing says "no leak seen on these own-tenant queries", not that tenants are isolated: that takes
    the cross-tenant audit (the ``tenant_audit`` fixture, :func:`assert_tenant_audit_clean`)."""
    __tracebackhide__ = True
    from ragaudit.evaluation.result import EvalResult
    from ragaudit.gates.leaks import describe_leak
    from ragaudit.gates.result import WORST
    from ragaudit.runner.tenancy import every_chunk_checked
    from ragaudit.verdict import isolation_of

    leaks = (
        result.leaks() if isinstance(result, EvalResult) else result.get("security", {}).get("records", [])
    )
    if not isinstance(result, EvalResult):
        from ragaudit.evaluation.integrity import leak_inconsistency

        if hidden := leak_inconsistency(result):  # a report edited by hand: its leak count is no evidence
            raise AssertionError(f"leaks NOT COUNTED: {hidden}")
    if leaks:
        shown = "; ".join(describe_leak(leak) for leak in leaks[:WORST])
        raise AssertionError(f"CRITICAL LEAK: {len(leaks)} cross-tenant chunk(s) returned: {shown}")
    if failed := _run_failed(result, max_error_rate):
        raise AssertionError("leaks NOT CHECKED: the run failed: " + "\n".join(failed))
    verdict = result.tenant_isolation() if isinstance(result, EvalResult) else isolation_of(result)
    if not allow_unverified and (verdict is None or not every_chunk_checked(verdict)):
        why = verdict.reason if verdict is not None else "the report has no security section"
        raise AssertionError(
            f"tenant isolation NOT VERIFIED: {why} (pass allow_unverified=True to accept that)"
        )


def assert_no_errors(result: EvalResult) -> None:
    """Fail when any golden case got no answer (an exception or a timeout)."""
    __tracebackhide__ = True
    from ragaudit.gates.result import WORST

    if result.errors:
        shown = "; ".join(f"{c.id}: {c.error}" for c in result.errors[:WORST])
        raise AssertionError(f"{len(result.errors)} of {result.counts.cases} case(s) failed: {shown}")
