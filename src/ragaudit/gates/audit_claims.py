"""Whether a tenant-audit report's own figures back its ``clean`` verdict.

The release gate takes an ``--audit`` report's verdict as the verification of tenant isolation, so the
verdict is checked against the figures beside it, never taken on its word: a report edited by hand
(leak records or per-pair counts left in while ``count`` says 0, hostile tenant ids that were served,
failed requests beyond the audit's own ``max_error_rate``, an audit that stopped early) or a report of
another kind with ``passed: true`` verifies nothing (docs/gates.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else 0


def _total(counts: Any) -> int:
    return sum(_int(v) for v in counts.values()) if isinstance(counts, Mapping) else 0


def audit_leak_count(leaks: Mapping[str, Any], count: int) -> int:
    """The most leaks an audit's ``leaks`` section shows anywhere: its ``count``, its listed records, its
    per-pair and per-class counts, its leaks to hostile ids (they agree in a report the audit wrote)."""
    records = leaks.get("records")
    return max(
        count,
        len(records) if isinstance(records, list) else 0,
        _int(leaks.get("records_listed")),
        _total(leaks.get("by_pair")),
        _total(leaks.get("by_class")),
        _int(leaks.get("to_hostile_ids")),
    )


def audit_contradiction(data: Mapping[str, Any]) -> str | None:
    """Why a tenant-audit report's figures contradict a ``clean`` verdict (``None``: they do not)."""
    if data.get("kind") != "tenant-audit":
        return f"it is a {data.get('kind')!r} report, not a tenant audit ('ragaudit audit-tenants --out')"
    if not isinstance(data.get("leaks"), Mapping):
        return "its leaks section is not the one 'ragaudit audit-tenants' writes (a count with its records)"
    hostile = data.get("hostile_tenants")
    served = _int(hostile.get("served")) if isinstance(hostile, Mapping) else 0
    if served:
        return f"its figures contradict its verdict: {served} request(s) as a hostile tenant id were served"
    errors = data.get("errors")
    rate = errors.get("rate") if isinstance(errors, Mapping) else None
    allowed = data.get("max_error_rate", 0.0)
    if isinstance(rate, (int, float)) and isinstance(allowed, (int, float)) and rate > allowed:
        return (
            f"its figures contradict its verdict: error rate {rate:g} > its max_error_rate {allowed:g} "
            "(an incomplete audit)"
        )
    corpus, asked = data.get("corpus"), data.get("tenants")
    owners = corpus.get("tenants") if isinstance(corpus, Mapping) else None
    if isinstance(owners, list) and isinstance(asked, list):
        skipped = sorted(set(map(str, owners)) - set(map(str, asked)))
        if skipped:
            return (
                f"its figures contradict its verdict: it audited {len(asked)} tenant(s), not its corpus's "
                f"{', '.join(skipped)}"
            )
    if data.get("stopped"):
        return f"its figures contradict its verdict: it stopped early ({data['stopped']})"
    return None
