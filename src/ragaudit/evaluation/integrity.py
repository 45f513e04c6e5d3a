"""Whether an eval report's case records account for the run it describes.

A floor, an error budget or a leak count is only as good as the per-case records behind it. A report
``ragaudit eval`` writes lists every case of its dataset once (``per_case``), gives every answerable
case a finite value of every metric it reports, and records each returned cross-tenant chunk in the
case that got it (``per_case[].leaks``) and in the ``security`` summary. A report edited by hand (its
worst or failed cases removed, a case listed twice so the better copy wins, a metric value blanked so
the mean skips it, the leak summary zeroed) breaks one of these, and nothing it says can be trusted:
:func:`report_inconsistencies` names each break; the release gate and the pytest plugin's helpers
refuse to pass such a report (docs/gates.md).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache
from pathlib import Path
from typing import Any

FIX = "use the report 'ragaudit eval' wrote, unedited"
SHOWN = 3


def _ids(ids: list[str]) -> str:
    return ", ".join(ids[:SHOWN]) + (" ..." if len(ids) > SHOWN else "")


def _count(holder: Any, key: str) -> int | None:
    value = holder.get(key) if isinstance(holder, Mapping) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _case_count(report: Mapping[str, Any], listed: int) -> str | None:
    """The report lists fewer or more cases than its dataset and its counts say it has."""
    claims = {
        "dataset.cases": _count(report.get("dataset"), "cases"),
        "counts.cases": _count(report.get("counts"), "cases"),
    }
    wrong = {where: n for where, n in claims.items() if n is not None and n != listed}
    if not wrong:
        return None
    said = ", ".join(f"{where} {n}" for where, n in wrong.items())
    return f"the report lists {listed} case(s) but says it has more or fewer ({said}): cases were removed or added; {FIX}"


@lru_cache(maxsize=4)
def _golden_ids(path: str, sha256: str) -> frozenset[str] | None:
    """The case ids of the golden JSONL file at ``path`` when it still has the content ``sha256`` (else
    ``None``: moved or changed since, so it cannot vouch for the report)."""
    from ragaudit.artifacts.provenance import sha256_of
    from ragaudit.data.golden_jsonl import load_golden_jsonl
    from ragaudit.errors import RagauditError

    try:
        if not Path(path).is_file() or sha256_of(path) != sha256:
            return None
        return frozenset(c.id for c in load_golden_jsonl(path).cases)
    except (OSError, RagauditError):
        return None


def _unlisted(report: Mapping[str, Any], cases: list[Any]) -> str | None:
    """Cases of the report's golden JSONL file (when it is still there, unchanged) that it lists no record
    of: removed, with their counts edited to match."""
    dataset = report.get("dataset")
    if not isinstance(dataset, Mapping) or dataset.get("format") != "jsonl":
        return None
    path, sha = dataset.get("path"), dataset.get("sha256")
    ids = _golden_ids(path, sha) if isinstance(path, str) and isinstance(sha, str) else None
    if ids is None:
        return None
    absent = sorted(ids - {str(c.get("id")) for c in cases if isinstance(c, Mapping)})
    if not absent:
        return None
    return (
        f"the report has no record of {len(absent)} case(s) of its golden set {path}: {_ids(absent)}; "
        f"cases were removed; {FIX}"
    )


def unlisted_against(report: Mapping[str, Any], baseline: Mapping[str, Any]) -> str | None:
    """Cases the baseline lists (scored, failed or unanswerable) that the report lists no record of,
    both made on one golden set (same sha256): ``ragaudit eval`` lists every case of its dataset, so
    they were removed from the report."""
    sha = report.get("dataset", {}).get("sha256") if isinstance(report.get("dataset"), Mapping) else None
    theirs = (
        baseline.get("dataset", {}).get("sha256") if isinstance(baseline.get("dataset"), Mapping) else None
    )
    if not isinstance(sha, str) or sha != theirs:
        return None
    listed = {str(c.get("id")) for c in _cases(report) if isinstance(c, Mapping)}
    absent = sorted({str(c.get("id")) for c in _cases(baseline) if isinstance(c, Mapping)} - listed)
    if not absent:
        return None
    return (
        f"the report has no record of {len(absent)} case(s) the baseline lists on the same golden set: "
        f"{_ids(absent)}; cases were removed; {FIX}"
    )


def _blank_values(cases: list[Any], metrics: list[str]) -> str | None:
    """Answerable cases without a finite value of a reported metric (a mean would silently skip them)."""
    blank: list[str] = []
    for case in cases:
        if not isinstance(case, Mapping) or case.get("status") == "unanswerable":
            continue
        values = case.get("metrics")
        values = values if isinstance(values, Mapping) else {}
        for metric in metrics:
            value = values.get(metric)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                blank.append(f"{case.get('id')} ({metric} {value!r})")
                break
    if not blank:
        return None
    return (
        f"{len(blank)} answerable case(s) have no finite value of a reported metric: {_ids(blank)}; "
        f"every answerable case of a report 'ragaudit eval' wrote has one; {FIX}"
    )


def _hidden_leaks(report: Mapping[str, Any], cases: list[Any]) -> str | None:
    """Leaks recorded in the cases that the ``security`` summary does not count."""
    recorded = sum(
        len(case["leaks"])
        for case in cases
        if isinstance(case, Mapping) and isinstance(case.get("leaks"), list)
    )
    security = report.get("security")
    if not isinstance(security, Mapping):
        return (
            "the report has no security section, so its cross-tenant leaks cannot be counted (every report "
            f"'ragaudit eval' writes has one); {FIX}"
        )
    summary = security.get("leaks")
    counted = len(summary) if isinstance(summary, list) else _count(security, "leaks")
    if counted is None or counted < recorded:
        return (
            f"its cases record {recorded} cross-tenant chunk(s) but its security section counts "
            f"{summary!r}: the summary was edited or is corrupt; {FIX}"
        )
    return None


def latency_inconsistency(report: Mapping[str, Any]) -> str | None:
    """Why the report's latency p95 is not its cases' (``None``: it is, or it states none): the p95
    ``ragaudit eval`` writes is the percentile of the per-case ``latency_ms`` values."""
    from ragaudit.evaluation.result import percentile

    latency = report.get("latency_ms")
    stated = latency.get("p95") if isinstance(latency, Mapping) else None
    if not isinstance(stated, (int, float)) or isinstance(stated, bool):
        return None
    values = [
        float(v)
        for c in _cases(report)
        if isinstance(c, Mapping)
        and isinstance(v := c.get("latency_ms"), (int, float))
        and not isinstance(v, bool)
        and math.isfinite(v)
    ]
    if not values:
        return f"the report states a latency p95 of {stated:g} ms but none of its cases has a latency; {FIX}"
    p95 = percentile(values, 95)
    if math.isfinite(stated) and abs(p95 - stated) <= 1e-9 * max(1.0, abs(p95)):
        return None
    return (
        f"the report states a latency p95 of {stated:g} ms but its {len(values)} cases' latencies give "
        f"{p95:g} ms: it was edited or is corrupt; {FIX}"
    )


def _cases(report: Mapping[str, Any]) -> list[Any]:
    raw = report.get("per_case")
    return raw if isinstance(raw, list) else []


def leak_inconsistency(report: Mapping[str, Any]) -> str | None:
    """Why the report's leak count cannot be trusted (``None``: its security section counts at least
    the cross-tenant chunks its cases record)."""
    return _hidden_leaks(report, _cases(report))


def report_inconsistencies(report: Mapping[str, Any]) -> list[str]:
    """Why the report's case records do not account for its run (empty: they do): :func:`case_inconsistencies`
    and :func:`leak_inconsistency`."""
    leak = leak_inconsistency(report)
    return [*case_inconsistencies(report), *([leak] if leak else [])]


def case_inconsistencies(report: Mapping[str, Any]) -> list[str]:
    """Why the report's case records do not account for its cases (empty: they do). Checked: one record
    per case id, as many records as its dataset and counts say, and a finite value of every reported
    metric in every answerable case, and an ``in_sample`` section that says what its fitted stages and
    cases give (:mod:`ragaudit.evaluation.in_sample_integrity`)."""
    from ragaudit.evaluation.in_sample_integrity import in_sample_inconsistency

    cases = _cases(report)
    problems: list[str] = []
    repeated = [
        cid for cid, n in Counter(str(c.get("id")) for c in cases if isinstance(c, Mapping)).items() if n > 1
    ]
    if repeated:
        problems.append(
            f"{len(repeated)} case id(s) are listed more than once: {_ids(repeated)} (only one record of a "
            f"case can be its result); {FIX}"
        )
    problems += [p for p in (_case_count(report, len(cases)), _unlisted(report, cases)) if p]
    metrics = report.get("metrics")
    names = [str(m) for m in metrics] if isinstance(metrics, Mapping) else []
    problems += [p for p in (_blank_values(cases, names), in_sample_inconsistency(report)) if p]
    return problems
