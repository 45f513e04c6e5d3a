"""The typed view of a ``tenant-audit`` report (ragaudit audit-tenants): what the audit asked, what it
could not check, and every foreign chunk it recorded. Read once by the kind (``tenant_audit.py``); the
document's parts are built from it by ``tenant_leaks.py`` and ``tenant_asking.py``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragaudit.report.kinds.fields import Fields, count
from ragaudit.verdict import TENANT_ISOLATION, CheckVerdict, not_verified


def audit_isolation(report: Fields) -> CheckVerdict:
    """The audit's tenant-isolation check in three states; for a report written before it had one: fail
    when it lists leaks, else not verified (its unattributed chunks were never judged)."""
    found = CheckVerdict.from_json(report.opt("isolation"))
    if found is not None:
        return found
    leaks = report.obj("leaks").opt("count")
    if isinstance(leaks, int) and leaks:
        return CheckVerdict(TENANT_ISOLATION, "fail", f"{leaks} foreign chunk(s) served", leaks, leaks, leaks)
    return not_verified(TENANT_ISOLATION, "the audit report records no isolation check (an older ragaudit)")


@dataclass(frozen=True)
class AuditLeak:
    """One foreign chunk served: which probe, asked as whom (how, with which request mutation), whose
    chunk it was, how its owner was established and where in the response it was (JSON paths)."""

    probe_id: str
    caller: str
    hostile: bool
    asked: Mapping[str, Any] | None
    chunk_id: str
    rank: int
    """Its rank in the results; 0 for a value beside them (``$.facets...``)."""
    owners: list[str]
    attributed_by: str
    """As recorded: ``method@path`` parts joined by ``+`` (``id@$.related[0]+id@$.related[1]``)."""
    claimed_tenant: str | None
    paths: tuple[str, ...] = ()
    """The JSON paths of the foreign values (its ``fields``; else those named in ``attributed_by``),
    first seen first."""

    @classmethod
    def read(cls, leak: Fields) -> AuditLeak:
        asked = leak.opt("asked")
        claimed = leak.opt("claimed_tenant")
        attributed_by = str(leak.need("attributed_by"))
        paths = [str(f.opt("path")) for f in leak.each("fields", required=False) if f.opt("path")]
        if not paths:  # a record without its fields: the paths of ``method@path`` parts
            paths = [part.split("@", 1)[1] for part in attributed_by.split("+") if "@" in part]
        return cls(
            str(leak.obj("probe").need("id")),
            str(leak.need("caller")),
            leak.opt("hostile_caller") is True,
            asked if isinstance(asked, Mapping) else None,
            str(leak.need("chunk_id")),
            int(leak.need("rank")),
            leak.texts("owner"),
            attributed_by,
            None if claimed is None else str(claimed),
            tuple(dict.fromkeys(paths)),
        )

    @property
    def methods(self) -> str:
        """How the owner was established, without the paths (``content+id``, ``term``)."""
        return "+".join(sorted({part.split("@")[0] for part in self.attributed_by.split("+")}))

    @property
    def mutation(self) -> str | None:
        """The request mutation that got it (``offset=10 (body)``), None for a plain request."""
        found = (self.asked or {}).get("mutation")
        return str(found) if found else None


@dataclass(frozen=True)
class HostileServed:
    """A request with a hostile tenant id (not a tenant of the corpus) that the service answered with data."""

    caller: str
    description: str
    probe_id: str
    returned: int
    leaks: int


@dataclass(frozen=True)
class AuditAsking:
    """How hard the audit looked: requests by part, rounds, the top_k values and concurrency levels."""

    requests: int
    by_part: dict[str, int]
    rounds: int
    top_k_values: list[int]
    rejected_top_k: list[int]
    concurrency_levels: list[int]
    detection_power: str
    mutations: list[Mapping[str, Any]] = field(default_factory=list)
    """The mutation table (``asking.mutations``): one row per mutation of every axis."""
    plain_retries: int = 0
    """Requests sent again in plain form after the service refused a mutated shape (``asking.plain_retries
    .count``): counted in ``by_part``, not in the mutation table's planned requests."""


@dataclass(frozen=True)
class TenantAuditReport:
    """A tenant-audit report, typed (every field the terminal shows is required)."""

    verdict: str
    tenants: list[str]
    top_k: int
    probes: int
    probes_by_kind: dict[str, int]
    asking: AuditAsking
    hostile: dict[str, int]
    """``requests``, ``refused``, ``empty``, ``served`` and ``failed`` of the hostile tenant ids."""
    requests: int
    failed: int
    failed_by_kind: dict[str, int]
    checked_chunks: int
    unattributed: int
    label_mismatches: int
    unverified: int
    unverified_records: list[Mapping[str, Any]]
    leaks: list[AuditLeak]
    leaks_by_pair: dict[str, int]
    isolation: CheckVerdict
    """The tenant-isolation check in three states (only ``pass`` is verified)."""
    unattributed_allowed: bool = False
    leak_count: int | None = None
    """Every leak found (the report lists the first ``--max-records``); ``None`` in older reports, which
    listed them all."""
    leaks_to_hostile: int | None = None
    leaks_by_class: dict[str, int] | None = None
    stopped: str | None = None
    """Why the audit stopped before sending every planned request (the service could not be reached)."""
    hostile_served: list[HostileServed] = field(default_factory=list)
    """The first hostile-id requests that were served data (``hostile_tenants.records``)."""
    unattributed_records: list[Mapping[str, Any]] = field(default_factory=list)
    source: str | None = None
    """What was audited (``source.label``: an endpoint, a retriever plugin, a pipeline)."""

    @property
    def leak_total(self) -> int:
        """Every leak found: the stated count, or the records of a report that listed them all."""
        return self.leak_count if self.leak_count is not None else len(self.leaks)


def read_audit(report: Fields) -> TenantAuditReport:
    """The typed view of a tenant-audit report (``need`` fails loudly on a missing required field)."""
    asking, errors, leaks = report.obj("asking"), report.obj("errors"), report.obj("leaks")
    requests, hostile = asking.obj("requests"), report.obj("hostile_tenants")
    unverified, unattributed = report.obj("unverified"), report.obj("unattributed")
    return TenantAuditReport(
        verdict=str(report.need("verdict")),
        tenants=report.texts("tenants"),
        top_k=int(report.need("top_k")),
        probes=int(report.obj("probes").need("total")),
        probes_by_kind=dict(report.obj("probes").obj("by_kind").data),
        asking=AuditAsking(
            int(requests.need("total")),
            dict(requests.obj("by_part").data),
            int(asking.need("rounds")),
            list(asking.need("top_k_values")),
            list(asking.obj("max_top_k").need("rejected")),
            list(asking.need("concurrency_levels")),
            str(asking.obj("detection_power").need("statement")),
            [m for m in asking.opt("mutations") or [] if isinstance(m, Mapping)],
            _plain_retries(asking.opt("plain_retries")),
        ),
        hostile={
            **{k: int(hostile.need(k)) for k in ("requests", "refused", "empty", "served")},
            "failed": int(hostile.opt("failed") or 0),
        },
        requests=int(errors.need("total")),
        failed=int(errors.need("failed")),
        failed_by_kind=dict(errors.obj("by_kind").data),
        checked_chunks=int(report.need("checked_chunks")),
        unattributed=int(unattributed.need("count")),
        label_mismatches=int(report.need("label_mismatches")),
        unverified=int(unverified.need("count")),
        unverified_records=[u.data for u in unverified.each("records")],
        leaks=[AuditLeak.read(leak) for leak in leaks.each("records")],
        leaks_by_pair=dict(leaks.obj("by_pair").data),
        isolation=audit_isolation(report),
        unattributed_allowed=unattributed.opt("allowed") is True,
        leak_count=count(leaks.opt("count")),
        leaks_to_hostile=count(leaks.opt("to_hostile_ids")),
        leaks_by_class=dict(leaks.obj("by_class").data) if leaks.opt("by_class") is not None else None,
        stopped=_stopped(report.opt("stopped")),
        hostile_served=[_served(h) for h in hostile.each("records", required=False)],
        unattributed_records=[u.data for u in unattributed.each("records", required=False)],
        source=_source(report.opt("source")),
    )


def _served(record: Fields) -> HostileServed:
    return HostileServed(
        repr(record.opt("caller")),
        str(record.opt("description") or ""),
        str(record.opt("probe_id") or ""),
        int(record.opt("returned") or 0),
        int(record.opt("leaks") or 0),
    )


def _source(found: Any) -> str | None:
    label = found.get("label") if isinstance(found, Mapping) else None
    return str(label) if label else None


def _plain_retries(found: Any) -> int:
    count = found.get("count") if isinstance(found, Mapping) else None
    return count if isinstance(count, int) and not isinstance(count, bool) and count > 0 else 0


def _stopped(found: Any) -> str | None:
    """The early stop of a report in words (``None`` when it sent every planned request)."""
    if not isinstance(found, Mapping):
        return None
    from ragaudit.security.audit_verdict import stopped_sentence

    return stopped_sentence(found.get("not_sent", "?"), found.get("reason", "no reason recorded"))
