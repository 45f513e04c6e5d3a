"""Reading the leaks an eval report or a tenant audit lists: their count and records (in any of the
shapes ragaudit writes), one leak in words, and the leaks of shared tenants taken out."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ragaudit.gates.audit_claims import audit_leak_count


def leak_records(data: Mapping[str, Any]) -> tuple[int, list[Any]] | None:
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


def _owners(record: Any) -> frozenset[str]:
    """The owner tenants a leak record names (an audit's ``owner`` list, an eval record's
    ``claimed_tenant`` string, ``"a, b"`` for several)."""
    if not isinstance(record, Mapping):
        return frozenset()
    owner = _first(record, "owner", "claimed_tenant")
    if isinstance(owner, list):
        return frozenset(str(o) for o in owner)
    return frozenset(o.strip() for o in str(owner).split(",")) if owner is not None else frozenset()


def without_shared(found: tuple[int, list[Any]], shared: frozenset[str]) -> tuple[int, list[Any], int]:
    """``(count, records, shared)``: the listed leaks whose every owner is a shared tenant taken out."""
    count, records = found
    if not shared:
        return count, records, 0
    kept = [r for r in records if not (_owners(r) and _owners(r) <= shared)]
    return count - (len(records) - len(kept)), kept, len(records) - len(kept)
