"""Tenant-isolation check on every ranking the runner receives.

A returned chunk leaks when the tenant it claims differs from the caller's tenant, or, when the run
requires tenant labels, when it claims none (an unlabelled chunk cannot be shown to be the caller's).
Leaked chunks stay in the ranking (it is what the system returned); the leaks are listed beside it.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragaudit.data.run import LeakRecord, RankedItem


def find_leaks(
    items: Sequence[RankedItem], caller_tenant: str, require_labels: bool = False
) -> list[LeakRecord]:
    """Every item of ``items`` the caller's tenant must not see, with its 1-based rank."""
    return [
        LeakRecord(item.chunk_id, rank, item.tenant_id, caller_tenant)
        for rank, item in enumerate(items, start=1)
        if (item.tenant_id != caller_tenant if item.tenant_id is not None else require_labels)
    ]
