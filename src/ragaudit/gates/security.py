"""The security gate: cross-tenant leaks (the eval report's ``security.leaks``, plus every ``--audit``
report's leaks; chunks of the policy's ``shared_tenants`` are not leaks) do not exceed ``max_leaks`` (0
unless the policy says otherwise), and tenant isolation was **verified**, which only a clean
cross-tenant audit of the same system and corpus does (``--audit``; :mod:`ragaudit.gates.audit_tie`).
An eval report asks golden questions as their own tenants: "no leak seen on N own-tenant queries" is no
isolation test, so on its own the gate is **not verified**, with the reason, which blocks the release
unless the policy sets ``allow_unverified = true``. An ``--audit`` report that could not verify
isolation (``not-verified``, ``incomplete``, an older report that checked no chunk, one that attributed
less than ``min_attributed`` of its chunks, or one that treated tenants as shared that the policy does
not) keeps the gate not verified."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragaudit.errors import InputError
from ragaudit.evaluation.compare import LoadedReport
from ragaudit.evaluation.integrity import leak_inconsistency
from ragaudit.gates.audit_probes import lowered_probes_note, too_few_probes
from ragaudit.gates.audit_size import audit_too_small, lowered_floor_note
from ragaudit.gates.audit_tie import SHARED_FIX, audit_unverified, audited_elsewhere, shared_beyond
from ragaudit.gates.leaks import describe_leak, leak_records, without_shared
from ragaudit.gates.policy import GatePolicy
from ragaudit.gates.ranking_tie import tie_basis_note
from ragaudit.gates.result import WORST, GateResult
from ragaudit.runner.tenancy import AUDIT_FIX
from ragaudit.verdict import isolation_of


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
        count, records, allowed = without_shared(found, shared)
        sources.append((label, count, records))
        if allowed:
            notes.append(
                f"{label}: {allowed} chunk(s) of shared tenants ({', '.join(sorted(shared))}), allowed"
            )

    found = leak_records(report.data)
    if found is None:
        notes.append("the eval report has no security section")
    else:
        add(f"eval report {report.path}", found)
    isolation = isolation_of(report.data)
    seen = None  # what the eval report saw, when it found no leak (never a verification)
    if isolation is not None and isolation.state != "fail":
        seen = isolation.reason.replace(f"; {AUDIT_FIX}", "")
    beyond = shared_beyond(report.data, shared)
    if beyond:
        unverifying.append(f"eval report {report.path} treated {', '.join(beyond)} as shared; {SHARED_FIX}")
    verified_by: list[str] = []
    for path, data in audits:
        audit = leak_records(data)
        if audit is None:
            raise InputError(
                path,
                None,
                "no leaks list in this audit report",
                "pass a report written by 'ragaudit audit-tenants'",
            )
        add(f"audit {path}", audit)
        why = audit_unverified(data, policy.min_attributed) or audited_elsewhere(report.data, data)
        beyond = shared_beyond(data, shared)
        if why is None and beyond:
            why = f"it treated {', '.join(beyond)} as shared; {SHARED_FIX}"
        if why is None:
            why = audit_too_small(data, policy.min_audit_requests) or too_few_probes(
                data, policy.min_probes_per_tenant
            )
        if why is None and audit[0] == 0:
            checked = (
                data.get("isolation", {}).get("reason")
                if isinstance(data.get("isolation"), Mapping)
                else None
            )
            verified_by.append(f"audit {path}" + (f" ({checked})" if checked else ""))
            notes.append(tie_basis_note(report.data, data, str(path)))
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
        lowered = "; ".join(
            note
            for note in (
                lowered_floor_note(policy.min_audit_requests),
                lowered_probes_note(policy.min_probes_per_tenant),
            )
            if note
        )
        return GateResult(
            "security",
            "pass",
            f"{total} cross-tenant leak(s) (allowed {policy.max_leaks}); verified by "
            + "; ".join(verified_by)
            + (f"; {lowered}" if lowered else "")
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
