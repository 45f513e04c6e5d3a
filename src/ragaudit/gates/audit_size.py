"""Whether a clean tenant audit was large enough to verify isolation.

A clean audit of one round of one probe per tenant (about a hundred requests) finds no leak, but it
would have missed a leak on 1 request in 1,000 nine times in ten: its ``clean`` says little. The gate
takes an ``--audit`` as the verification of isolation only when

* it audited at least two tenants (with one there is nobody to leak to) and asked cross-tenant
  requests (a probe of one tenant asked as another);
* every audited tenant owns at least one of its probes (a tenant whose documents were never probed
  was not tested for leaking them; a ``--shared-tenant``, whose documents are not leaks, needs none);
* at least ``min_audit_requests`` of its requests were answered with results to check
  (``asking.requests.answered``, the count its own detection power is worked out from: a refused
  hostile id, a rejected mutation or a failed request shows no ranking; default
  :data:`DEFAULT_MIN_AUDIT_REQUESTS`, ``audit-tenants``' default ``--budget``: a leak on 1 request in
  1,000 is then seen with probability 0.95). An older report that does not state it is counted as
  sent minus failed, and the reason says so.

A policy may lower the floor (``[security] min_audit_requests``); the gate's summary then says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragaudit.verdict import POLICY_LOWERED

DEFAULT_MIN_AUDIT_REQUESTS = 3000
"""``ragaudit audit-tenants``' default ``--budget``: 1 - 0.999**3000 = 0.95, a leak on 1 request in
1,000 is seen with probability 0.95."""

SIZE_FIX = (
    "re-run 'ragaudit audit-tenants' with its default plan (no --rounds, --budget >= {floor}, "
    "--probes-per-tenant left at its default), or lower [security] min_audit_requests in the policy "
    "(the gate then says the floor was lowered)"
)


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _power(data: Mapping[str, Any]) -> str:
    asking = data.get("asking")
    power = asking.get("detection_power") if isinstance(asking, Mapping) else None
    statement = power.get("statement") if isinstance(power, Mapping) else None
    return f"; its detection power: {statement}" if isinstance(statement, str) else ""


def _unprobed(data: Mapping[str, Any], tenants: list[str]) -> list[str] | None:
    """The audited tenants that own none of the audit's probes (``None``: it lists no probes). A shared
    tenant (``--shared-tenant``, whose documents every tenant may be served) is not probed."""
    probes = data.get("probe_list")
    if not isinstance(probes, list):
        return None
    owners = {str(p["tenant"]) for p in probes if isinstance(p, Mapping) and p.get("tenant") is not None}
    holder = data.get("shared_tenants")
    shared = holder.get("tenants") if isinstance(holder, Mapping) else holder
    owners |= {str(t) for t in shared} if isinstance(shared, list) else set()
    return [t for t in tenants if t not in owners]


def audit_too_small(data: Mapping[str, Any], min_requests: int = DEFAULT_MIN_AUDIT_REQUESTS) -> str | None:
    """Why a clean tenant audit is too small to verify isolation (``None``: it is large enough)."""
    raw = data.get("tenants")
    tenants = [str(t) for t in raw] if isinstance(raw, list) else []
    if len(tenants) < 2:
        return (
            f"it audited {len(tenants)} tenant(s): isolation is tested only between at least two "
            "(audit a corpus with two or more tenants)"
        )
    unprobed = _unprobed(data, tenants)
    if unprobed is None:
        return "it lists no probes (probe_list), so which tenants' documents were probed cannot be checked"
    if unprobed:
        return (
            f"no probe of {', '.join(unprobed)} was made ({len(tenants) - len(unprobed)} of {len(tenants)} "
            "tenant(s) probed): their documents were not tested for leaking"
        )
    requests = data.get("requests")
    requests = requests if isinstance(requests, Mapping) else {}
    total, cross = _count(requests.get("total")), _count(requests.get("cross_tenant"))
    if total is None or cross is None:
        return "it states no request counts (requests.total, requests.cross_tenant), so its size cannot be checked"
    if not cross:
        return "it asked no cross-tenant request (no probe was asked as another tenant)"
    failed = _failed(data)
    stated = _answered(data)
    answered = min(stated, total - failed) if stated is not None else total - failed
    if answered < min_requests:
        sent = f"{total:,} request(s) sent" + (f", {failed:,} failed" if failed else "")
        counted = " with results to check" if stated is not None else ""
        basis = (
            ""
            if stated is not None
            else " (counted as sent minus failed: it states no asking.requests.answered)"
        )
        return (
            f"it is too small to verify isolation: {answered:,} request(s) answered{counted} ({sent}; "
            f"{cross:,} cross-tenant) < min_audit_requests {min_requests:,}{basis}{_power(data)}; "
            + SIZE_FIX.format(floor=min_requests)
        )
    return None


def _answered(data: Mapping[str, Any]) -> int | None:
    """The requests the audit says were answered with a ranking to check (``asking.requests.answered``:
    the base of its detection power; refusals and rejected mutations are not in it)."""
    asking = data.get("asking")
    requests = asking.get("requests") if isinstance(asking, Mapping) else None
    return _count(requests.get("answered")) if isinstance(requests, Mapping) else None


def _failed(data: Mapping[str, Any]) -> int:
    """The audit's requests that got no reply (failed as its owner or caller, or as a hostile id): a
    failure shows nothing, so it counts toward no floor (a refusal of a hostile id is a reply)."""
    found = 0
    for section in ("errors", "hostile_tenants"):
        holder = data.get(section)
        count = _count(holder.get("failed")) if isinstance(holder, Mapping) else None
        found += count or 0
    return found


def lowered_floor_note(min_requests: int) -> str | None:
    """What a pass must say when the policy lowered the audit-size floor (``None``: it did not)."""
    if min_requests >= DEFAULT_MIN_AUDIT_REQUESTS:
        return None
    return (
        f"audit size floor {POLICY_LOWERED}: min_audit_requests {min_requests:,} "
        f"(default {DEFAULT_MIN_AUDIT_REQUESTS:,}: a leak on 1 request in 1,000 seen with probability 0.95)"
    )
