"""The four release gates. Each returns a :class:`GateResult` whose findings explain every failure
with its numbers.

1. **self-test**: the metric math gives known answers (:mod:`ragaudit.gates.selftest`);
2. **quality**: every floored metric's mean reaches its floor, and no metric regressed against the
   baseline by more than ``max_regression`` *and* significantly (paired randomization test,
   Holm-corrected across the checked metrics, at ``alpha``; :func:`ragaudit.evaluation.compare.compare_reports`).
   A drop beyond the tolerance that is not significant is reported, not counted: on a small golden
   set it is as likely noise as a regression;
3. **security**: cross-tenant leaks (the eval report's ``security.leaks``, plus every ``--audit``
   report's leaks; chunks of the policy's ``shared_tenants`` are not leaks) do not exceed
   ``max_leaks`` (0 unless the policy says otherwise), and tenant isolation was **verified**, which
   only a clean cross-tenant audit of the same system and corpus does (``--audit``). An eval report
   asks golden questions as their own tenants: "no leak seen on N own-tenant queries" is no isolation
   test, so on its own the gate is **not verified**, with the reason, which blocks the release unless
   the policy sets ``allow_unverified = true``. An ``--audit`` report that could not verify isolation
   (``not-verified``, ``incomplete``, an older report that checked no chunk, one that attributed less
   than ``min_attributed`` of its chunks, or one that treated tenants as shared that the policy does
   not) keeps the gate not verified;
4. **operations**: latency p95 within its budget, and the share of failed cases (errors and cases the
   run has no result for) within ``max_error_rate``, which is 0 when the policy sets none: a run whose
   cases failed is not a passing run. A report where no case could be scored fails. A budget the
   report cannot be checked against (no latency in a run-file evaluation) fails: an unmeasured
   budget is not a met one.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from ragaudit.artifacts.tables import fmt_p
from ragaudit.data.run import MISSING
from ragaudit.errors import InputError
from ragaudit.evaluation.compare import LoadedReport, compare_reports, depth_note, unpaired_notes
from ragaudit.evaluation.integrity import (
    case_inconsistencies,
    latency_inconsistency,
    leak_inconsistency,
    unlisted_against,
)
from ragaudit.evaluation.outcome import report_outcome
from ragaudit.gates.audit_claims import audit_contradiction, audit_leak_count
from ragaudit.gates.policy import GatePolicy
from ragaudit.gates.selftest import run_selftest
from ragaudit.runner.tenancy import AUDIT_FIX
from ragaudit.verdict import isolation_of

Status = Literal["pass", "fail", "skip", "not_verified"]
WORST = 5


@dataclass(frozen=True)
class GateResult:
    """One gate's outcome: ``findings`` are the reasons it failed, ``notes`` what it did not check.

    ``not_verified``: the gate could not establish what it guards; it blocks the release (``passed`` is
    false) unless ``accepted`` (the policy waived it), and it never prints as a pass."""

    gate: str
    status: Status
    summary: str
    findings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    numbers: Mapping[str, Any] = field(default_factory=dict)
    accepted: bool = False

    @property
    def passed(self) -> bool:
        return self.status in ("pass", "skip") or (self.status == "not_verified" and self.accepted)

    def to_json(self) -> dict[str, Any]:
        return {
            "gate": self.gate,
            "name": self.gate,
            "passed": self.passed,
            "messages": list(self.findings) or [self.summary],
            "status": self.status,
            "accepted": self.accepted,
            "summary": self.summary,
            "findings": list(self.findings),
            "notes": list(self.notes),
            "numbers": dict(self.numbers),
        }


def fmt_score(value: float, floor: float | None = None) -> str:
    """A score with 2 decimals, or 4 when 2 would round it up to ``floor`` (``0.61``, ``0.6996``)."""
    if not math.isfinite(value):
        return "nan"
    short = f"{value:.2f}"
    return f"{value:.4f}" if floor is not None and value < floor <= float(short) else short


def worst_queries(per_case: Mapping[str, float], n: int = WORST) -> str:
    """``id (value), ...`` of the ``n`` lowest-scoring cases (ties by id)."""
    ranked = sorted(per_case.items(), key=lambda kv: (kv[1], kv[0]))[:n]
    return ", ".join(f"{cid} ({fmt_score(v)})" for cid, v in ranked) or "none scored"


def floor_failure(
    metric: str, value: float | None, floor: float, per_case: Mapping[str, float]
) -> str | None:
    """``"nDCG@10 0.61 < floor 0.70; worst queries: ..."`` when ``value`` misses ``floor``, else ``None``."""
    if value is not None and math.isfinite(value) and value >= floor:
        return None
    shown = (
        "nan (no answerable case)" if value is None or not math.isfinite(value) else fmt_score(value, floor)
    )
    return f"{metric} {shown} < floor {fmt_score(floor)}; worst queries: {worst_queries(per_case)}"


def selftest_gate() -> GateResult:
    report = run_selftest()
    total = len(report.checks)
    numbers = {"checks": total, "failed": len(report.failures), "seconds": round(report.seconds, 4)}
    if report.passed:
        return GateResult(
            "self-test",
            "pass",
            f"{total}/{total} known-answer metric checks pass (pure and bulk)",
            numbers=numbers,
        )
    return GateResult(
        "self-test",
        "fail",
        f"{len(report.failures)} of {total} metric checks FAIL: this installation computes wrong numbers",
        tuple(f"{c.name}: {c.detail}" for c in report.failures),
        numbers=numbers,
    )


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
    result = compare_reports([baseline, report], baseline, metrics, policy.alpha, resamples, seed)
    if (same := _same_run(report, baseline)) is not None:  # compared with itself: nothing compared
        return [*findings, same], notes, []
    rows = result["comparisons"]
    notes += unpaired_notes(baseline, [report], metrics)  # what the paired check could not see
    notes += [depth] if (depth := depth_note([baseline, report], metrics)) else []
    for c in rows:
        drop = -c["delta"]
        where = (
            f"{c['metric']} {fmt_score(c['system_mean'])} vs baseline {fmt_score(c['baseline_mean'])} "
            f"(delta {c['delta']:+.4f}, {fmt_p(c['p_value_corrected'])} Holm over {len(rows)} metrics, "
            f"{c['n']} paired cases)"
        )
        if drop > tolerance and c["significant"]:
            moved = ", ".join(f"{m['id']} ({m['delta']:+.2f})" for m in c["most_regressed"]) or "-"
            findings.append(
                f"{where}: a significant regression beyond the tolerance {tolerance} at alpha {policy.alpha}; "
                f"most regressed queries: {moved}"
            )
        elif drop > tolerance:
            notes.append(f"{where}: dropped beyond the tolerance but not significantly; not counted")
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


def quality_gate(
    report: LoadedReport,
    policy: GatePolicy,
    baseline: LoadedReport | None = None,
    *,
    resamples: int = 10_000,
    seed: int = 0,
) -> GateResult:
    unearned = _in_sample(report, policy, baseline)
    if unearned is not None:
        return unearned
    findings, floor_numbers = _floors(report, policy.floors)
    findings += case_inconsistencies(report.data)  # figures its case records do not account for
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


def load_json(path: str | Path, what: str) -> dict[str, Any]:
    p = Path(path)
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(str(p), None, f"{what} not found", "check the path") from None
    except json.JSONDecodeError as exc:
        raise InputError(
            str(p), exc.lineno, f"not valid JSON: {exc.msg}", f"pass the {what} ragaudit wrote"
        ) from None
    if not isinstance(data, dict):
        raise InputError(str(p), None, f"a {what} must be a JSON object", f"pass the {what} ragaudit wrote")
    return data


def _leak_records(data: Mapping[str, Any]) -> tuple[int, list[Any]] | None:
    """``(count, records)`` from ``leaks`` at the top or under ``security``: a list of records, a count
    (records beside it), or ``{"count", "records"}`` (the tenant-audit report)."""
    for holder in (data, data.get("security")):
        if not isinstance(holder, Mapping) or "leaks" not in holder:
            continue
        leaks = holder["leaks"]
        if isinstance(leaks, Mapping):
            holder, leaks = leaks, leaks.get("count", leaks.get("records"))
        records = holder.get("records") if isinstance(holder.get("records"), list) else []
        if isinstance(leaks, list):
            return len(leaks), leaks
        if isinstance(leaks, int) and not isinstance(leaks, bool):
            return audit_leak_count(holder, leaks), list(records or [])
    return None


def _first(record: Mapping[str, Any], *keys: str) -> Any:
    return next((record[k] for k in keys if record.get(k) not in (None, "", [])), None)


def describe_leak(record: Any) -> str:
    """One leak in words, from an eval report's or a tenant audit's record (any other shape as JSON)."""
    if isinstance(record, Mapping):
        chunk, caller = record.get("chunk_id"), _first(record, "caller_tenant", "caller")
        if chunk is not None and caller is not None:
            probe = record.get("probe")
            probe_id = probe.get("id") if isinstance(probe, Mapping) else None
            owner = _first(record, "claimed_tenant", "owner")
            owner = ", ".join(map(str, owner)) if isinstance(owner, list) else owner
            rank = f" (rank {record['rank']})" if record.get("rank") is not None else ""
            where = (
                f"case {record['case_id']}: "
                if record.get("case_id")
                else f"probe {probe_id}: "
                if probe_id
                else ""
            )
            return f"{where}chunk {chunk}{rank} owned by {owner!r}, asked as {caller!r}"
    text = json.dumps(record, ensure_ascii=False, default=str)
    return text if len(text) <= 160 else text[:157] + "..."


def _audit_unverified(data: Mapping[str, Any], min_attributed: float = 0.95) -> str | None:
    """Why a tenant-audit report does not verify isolation (None: it does).

    It does when it passed with the verdict ``clean``, its tenant-isolation check is ``pass`` and it
    attributed at least ``min_attributed`` of the chunks it got (an audit run with
    ``--allow-unattributed`` may have accepted fewer). A report without the check (written before it
    existed) verifies nothing when it attributed none of the chunks it got, or left any unattributed."""
    isolation = data.get("isolation")
    state = isolation.get("state") if isinstance(isolation, Mapping) else None
    reason = isolation.get("reason") if isinstance(isolation, Mapping) else None
    if data.get("passed") is not True or data.get("verdict", "clean") != "clean":
        return f"its verdict is {data.get('verdict', 'not clean')!r}" + (f": {reason}" if reason else "")
    if contradiction := audit_contradiction(data):
        return contradiction
    unattributed = data.get("unattributed")
    raw_count = unattributed.get("count") if isinstance(unattributed, Mapping) else None
    raw_checked = data.get("checked_chunks")
    count = raw_count if isinstance(raw_count, int) else 0
    checked = raw_checked if isinstance(raw_checked, int) else 0
    if state is not None:
        if state != "pass":
            return f"its isolation check is {state!r}: {reason}"
        share = (checked - count) / checked if count and checked else 1.0
        if share < min_attributed:
            return (
                f"it attributed only {checked - count:,} of {checked:,} returned chunks ({share:.1%}, below "
                f"min_attributed {min_attributed:g}); the rest were accepted by --allow-unattributed"
            )
        return None
    if not checked:
        return "it checked no returned chunk"
    if count:
        return f"{count} of {checked} returned chunks were not attributed to any tenant (an older report)"
    return None


def _shared_beyond(data: Mapping[str, Any], allowed: frozenset[str]) -> tuple[str, ...]:
    """The tenants a report or audit treated as shared (``--shared-tenant``) that the policy does not."""
    holder = data.get("shared_tenants")  # an audit's; an eval report's is under retrieval
    if holder is None and isinstance(data.get("retrieval"), Mapping):
        holder = data["retrieval"].get("shared_tenants")
    names = holder.get("tenants") if isinstance(holder, Mapping) else holder
    if not isinstance(names, list):
        return ()
    return tuple(sorted(str(n) for n in names if str(n) not in allowed))


def _owners(record: Any) -> frozenset[str]:
    """The owner tenants a leak record names (an audit's ``owner`` list, an eval record's
    ``claimed_tenant`` string, ``"a, b"`` for several)."""
    if not isinstance(record, Mapping):
        return frozenset()
    owner = _first(record, "owner", "claimed_tenant")
    if isinstance(owner, list):
        return frozenset(str(o) for o in owner)
    return frozenset(o.strip() for o in str(owner).split(",")) if owner is not None else frozenset()


def _without_shared(found: tuple[int, list[Any]], shared: frozenset[str]) -> tuple[int, list[Any], int]:
    """``(count, records, shared)``: the listed leaks whose every owner is a shared tenant taken out."""
    count, records = found
    if not shared:
        return count, records, 0
    kept = [r for r in records if not (_owners(r) and _owners(r) <= shared)]
    return count - (len(records) - len(kept)), kept, len(records) - len(kept)


def _system_of(data: Mapping[str, Any]) -> tuple[str, str] | None:
    """Which system a report or audit ran: ``("pipeline", config sha256)``, ``("endpoint", host/path)``
    or ``("retriever", module:factory)``; ``None`` when it does not say (a run file)."""
    source = data.get("source")
    source = source if isinstance(source, Mapping) else {}
    for holder in (data.get("pipeline"), source.get("pipeline")):
        if isinstance(holder, Mapping) and isinstance(holder.get("config_sha256"), str):
            return "pipeline", str(holder["config_sha256"])
    for kind in ("endpoint", "retriever"):
        if isinstance(source.get(kind), str):
            return kind, str(source[kind])
    return None


def _corpus_of(data: Mapping[str, Any]) -> str | None:
    corpus = data.get("corpus")
    sha = corpus.get("sha256") if isinstance(corpus, Mapping) else None
    return str(sha) if isinstance(sha, str) else None


def _short(kind: str, name: str) -> str:
    """A system as messages name it: a pipeline's config sha256 cut to 16 characters; an endpoint or a
    retriever whole (cut, ``http://localhost:8001/search`` and ``:8002`` would read the same)."""
    return name[:16] if kind == "pipeline" else name


def _audited_elsewhere(report: Mapping[str, Any], audit: Mapping[str, Any]) -> str | None:
    """Why a clean audit says nothing about the report's system (``None``: both name the same system,
    and the same corpus where both name one): it audited another system or another corpus, or one of
    them names no system (a run-file evaluation, a hand-written audit), so nothing ties the two."""
    mine, theirs = _system_of(report), _system_of(audit)
    if mine is None or theirs is None:
        which = "the eval report" if mine is None else "the audit"
        return (
            f"{which} names no system (a run-file evaluation or a hand-written report), so nothing ties this "
            "audit to the system the report evaluated; evaluate and audit the same --pipeline, --endpoint "
            "or --retriever (or waive it in the policy: allow_unverified = true)"
        )
    if mine is not None and theirs is not None and mine != theirs:
        return (
            f"it audited another system ({theirs[0]} {_short(*theirs)}, the report evaluated {mine[0]} "
            f"{_short(*mine)})"
        )
    mine_corpus, their_corpus = _corpus_of(report), _corpus_of(audit)
    if mine_corpus is not None and their_corpus is None:  # every audit reads a corpus and names it
        return (
            "the audit names no corpus (sha256), so nothing ties it to the corpus the report evaluated "
            f"({mine_corpus[:12]})"
        )
    if mine_corpus is not None and their_corpus is not None and mine_corpus != their_corpus:
        return f"it audited another corpus (sha256 {their_corpus[:12]}, the report's {mine_corpus[:12]})"
    return None


def security_gate(
    report: LoadedReport, policy: GatePolicy, audits: Sequence[tuple[str, Mapping[str, Any]]] = ()
) -> GateResult:
    shared = frozenset(policy.shared_tenants)
    sources: list[tuple[str, int, list[Any]]] = []
    notes: list[str] = []
    unverifying: list[str] = []
    """What keeps the gate from passing although no leak was found: an audit that could not verify
    isolation, a report or audit that treated tenants as shared the policy does not list."""

    def add(label: str, found: tuple[int, list[Any]]) -> None:
        count, records, allowed = _without_shared(found, shared)
        sources.append((label, count, records))
        if allowed:
            notes.append(
                f"{label}: {allowed} chunk(s) of shared tenants ({', '.join(sorted(shared))}), allowed"
            )

    found = _leak_records(report.data)
    if found is None:
        notes.append("the eval report has no security section")
    else:
        add(f"eval report {report.path}", found)
    isolation = isolation_of(report.data)
    seen = None  # what the eval report saw, when it found no leak (never a verification)
    if isolation is not None and isolation.state != "fail":
        seen = isolation.reason.replace(f"; {AUDIT_FIX}", "")
    beyond = _shared_beyond(report.data, shared)
    if beyond:
        unverifying.append(f"eval report {report.path} treated {', '.join(beyond)} as shared; {_SHARED_FIX}")
    verified_by: list[str] = []
    for path, data in audits:
        audit = _leak_records(data)
        if audit is None:
            raise InputError(
                path,
                None,
                "no leaks list in this audit report",
                "pass a report written by 'ragaudit audit-tenants'",
            )
        add(f"audit {path}", audit)
        why = _audit_unverified(data, policy.min_attributed) or _audited_elsewhere(report.data, data)
        beyond = _shared_beyond(data, shared)
        if why is None and beyond:
            why = f"it treated {', '.join(beyond)} as shared; {_SHARED_FIX}"
        if why is None and audit[0] == 0:
            checked = (
                data.get("isolation", {}).get("reason")
                if isinstance(data.get("isolation"), Mapping)
                else None
            )
            verified_by.append(f"audit {path}" + (f" ({checked})" if checked else ""))
        elif audit[0] == 0:
            unverifying.append(f"audit {path} found no leak but does not verify isolation: {why}")
    total = sum(n for _, n, _ in sources)
    hidden = leak_inconsistency(report.data)
    numbers = {
        "leaks": total,
        "max_leaks": policy.max_leaks,
        "by_source": {s: n for s, n, _ in sources},
        "isolation": isolation.to_json() if isolation is not None else None,
        "verified_by": verified_by,
        "shared_tenants": sorted(shared),
    }
    if hidden is not None:  # the leak count itself cannot be trusted
        return GateResult(
            "security",
            "fail",
            "the eval report's leak count cannot be trusted",
            (hidden,),
            tuple(notes),
            numbers,
        )
    if total > policy.max_leaks:
        findings = [
            f"{total} cross-tenant leak(s) > allowed {policy.max_leaks}: "
            + ", ".join(f"{n} in {s}" for s, n, _ in sources if n)
            + "; a leak is a release blocker whatever the quality metrics say"
        ]
        for source, _, records in sources:
            findings += [f"{source}: {describe_leak(r)}" for r in records[:WORST]]
        return GateResult(
            "security", "fail", f"{total} cross-tenant leak(s)", tuple(findings), tuple(notes), numbers
        )
    notes.extend(unverifying)
    waived = " (allowed by the policy: allow_unverified = true)" if policy.allow_unverified else ""
    if unverifying:
        return GateResult(
            "security",
            "not_verified",
            f"tenant isolation NOT VERIFIED{waived}: {unverifying[0]}",
            notes=(
                *notes,
                "re-run 'ragaudit audit-tenants' on the system and corpus this report evaluated until it is clean (its summary names the fix)",
            ),
            numbers=numbers,
            accepted=policy.allow_unverified,
        )
    if total:  # tolerated by max_leaks: waived like allow_unverified, never a pass (a leak is a leak)
        return GateResult(
            "security",
            "not_verified",
            f"{total} cross-tenant leak(s) TOLERATED by the policy (max_leaks {policy.max_leaks}): a run "
            "that found a leak is no pass",
            tuple(f"{source}: {describe_leak(r)}" for source, _, records in sources for r in records[:WORST]),
            tuple(notes),
            numbers,
            accepted=True,
        )
    if verified_by:
        return GateResult(
            "security",
            "pass",
            f"{total} cross-tenant leak(s) (allowed {policy.max_leaks}); verified by "
            + "; ".join(verified_by)
            + (f"; eval report: {seen}" if seen else ""),
            notes=tuple(notes),
            numbers=numbers,
        )
    if isolation is not None:
        reason = f"eval report {report.path}: {seen or isolation.reason}"
    else:
        reason = "the eval report has no security section"
    return GateResult(
        "security",
        "not_verified",
        f"tenant isolation NOT VERIFIED{waived}: {reason}",
        notes=(
            *notes,
            "only a cross-tenant audit verifies isolation: pass --audit with a clean 'ragaudit audit-tenants' "
            "report of the same system and corpus",
        ),
        numbers=numbers,
        accepted=policy.allow_unverified,
    )


_SHARED_FIX = (
    "list them in [security] shared_tenants if every tenant may be served their documents, else run "
    "it without --shared-tenant"
)


def operations_gate(report: LoadedReport, policy: GatePolicy) -> GateResult:
    """Latency p95 within its budget (when the policy sets one), and the run's failed cases within
    ``max_error_rate``: always checked, with 0 when the policy sets none (a run whose cases failed is
    not a passing run). Failed cases are counted as ``ragaudit eval`` counts them
    (:mod:`ragaudit.evaluation.outcome`): errors, and cases the run has no result for (``missing``);
    a report where no case could be scored, or that shares no case with its dataset, fails too."""
    findings: list[str] = []
    numbers: dict[str, Any] = {}
    parts: list[str] = []
    if policy.latency_p95_ms is not None:
        latency = report.data.get("latency_ms")
        p95 = latency.get("p95") if isinstance(latency, Mapping) else None
        numbers["latency_p95_ms"] = {"value": p95, "budget": policy.latency_p95_ms}
        if edited := latency_inconsistency(report.data):
            findings.append(edited)
        elif not isinstance(p95, (int, float)):
            findings.append(
                "latency p95 has a budget but the report has no latency (a run-file evaluation measures none); "
                "evaluate the live system (--pipeline, --endpoint or --retriever) or drop latency_p95_ms"
            )
        elif p95 > policy.latency_p95_ms:
            findings.append(f"latency p95 {p95:.1f} ms > budget {policy.latency_p95_ms:g} ms")
        else:
            parts.append(f"latency p95 {p95:.1f} ms <= {policy.latency_p95_ms:g} ms")
    budget = policy.max_error_rate if policy.max_error_rate is not None else 0.0
    unset = "" if policy.max_error_rate is not None else " (no max_error_rate: none tolerated)"
    outcome = report_outcome(report.data, f"report {report.path}", "report")
    missing = sum(1 for _, reason in outcome.failures if reason == MISSING)
    errors = len(outcome.failures) - missing
    cases = outcome.total
    rate = outcome.rate if cases else math.nan
    numbers["error_rate"] = {
        "value": rate,
        "errors": errors,
        "missing": missing,
        "cases": cases,
        "budget": budget,
        "budget_set": policy.max_error_rate is not None,
    }
    failed = f"{errors} errors" + (f" + {missing} missing" if missing else "")
    if outcome.failures and outcome.rate > budget:
        shown = ", ".join(f"{cid}: {reason}" for cid, reason in outcome.failures[:3])
        findings.append(
            f"error rate {rate:.4f} ({failed} / {cases} cases) > budget {budget:g}{unset}; e.g. {shown}"
        )
    else:
        parts.append(f"error rate {rate:.4f} ({len(outcome.failures)}/{cases}) <= {budget:g}{unset}")
    findings += outcome.problems(1.0)  # nothing scored, no case shared: whatever the budget
    findings += case_inconsistencies(report.data)  # removed cases hide their failures
    if findings:
        return GateResult("operations", "fail", "; ".join(findings), tuple(findings), numbers=numbers)
    return GateResult("operations", "pass", "; ".join(parts), numbers=numbers)
