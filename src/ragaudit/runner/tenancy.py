"""Tenant-isolation check on every ranking the runner receives, and its verdict over a whole run.

Each returned chunk's owner is established, in this order:

1. **from the corpus** (when an ownership index is given, e.g. ``ragaudit eval --corpus``): by id, by
   content and by every other field the chunk carries (title, snippet, highlight, metadata values,
   source ids), exactly as the tenant audit does (:mod:`ragaudit.security.ownership`); the label the
   service attaches is then not trusted. A chunk is a leak when the corpus ties it to another tenant;
2. else **from the response's** ``tenant_id`` (a claim by the service): a leak when it differs from
   the caller's tenant. Not for a chunk whose text the corpus finds in no document (analysed or
   rewritten text): with a corpus given, that chunk is not verified, whatever its label says;
3. else the chunk is **not verified** (and, when the run requires tenant labels, counted as a leak:
   an unlabelled chunk cannot be shown to be the caller's).

Leaked chunks stay in the ranking (it is what the system returned); the leaks are listed beside it.
The run's verdict (:class:`ragaudit.verdict.CheckVerdict`) is **pass** only when every returned
chunk was checked and none leaked, **fail** on any leak, and **not verified** (with the reason and
the counts, e.g. 10 of 50 chunks) otherwise.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from ragaudit.data.run import LeakRecord, RankedItem, Run
from ragaudit.verdict import CheckVerdict, decide


class ChunkOwner(Protocol):
    """What an ownership index says of one returned chunk (e.g. ``security.ownership.Attribution``)."""

    @property
    def attributed(self) -> bool: ...

    @property
    def text_unfound(self) -> bool:
        """The chunk carries text the corpus finds in no document (analysed or rewritten text)."""
        ...

    def foreign_owners(self, caller: str) -> frozenset[str]: ...


class ChunkOwnership(Protocol):
    """Decides who owns a returned chunk from the corpus, by id and content (the tenant audit's
    ``security.ownership.ChunkOwnership`` is one); the runner needs only this, so it does not import
    the security floor above it."""

    def attribute_item(self, item: RankedItem) -> ChunkOwner:
        """Who owns ``item``, from its id, content and every other field it carries."""
        ...


CHECK = "tenant isolation"
BY_CORPUS = "corpus"
BY_LABEL = "response tenant_id"
BY_MISSING_LABEL = "missing tenant_id (labels required)"
LEAKS = "cross-tenant chunk(s)"


@dataclass
class CaseIsolation:
    """The tenant check of one ranking: its leaks and how each chunk's owner was established."""

    leaks: list[LeakRecord] = field(default_factory=list)
    methods: Counter[str] = field(default_factory=Counter)
    unverified: set[tuple[str, int]] = field(default_factory=set)
    """``(chunk_id, rank)`` of every chunk whose owner could not be established."""


def check_chunks(
    items: Sequence[RankedItem],
    caller_tenant: str | None,
    ownership: ChunkOwnership | None = None,
    require_labels: bool = False,
) -> CaseIsolation:
    """Check every item of one ranking returned to ``caller_tenant`` (see the module docstring)."""
    out = CaseIsolation()
    for rank, item in enumerate(items, start=1):
        if caller_tenant is None:
            out.unverified.add((item.chunk_id, rank))
            continue
        if ownership is not None:
            who = ownership.attribute_item(item)
            foreign = sorted(who.foreign_owners(caller_tenant))
            if who.attributed or foreign:  # a foreign field is a leak even beside unattributable text
                out.methods[BY_CORPUS] += 1
                if foreign:
                    out.leaks.append(LeakRecord(item.chunk_id, rank, ", ".join(foreign), caller_tenant))
                continue
            if who.text_unfound:  # text nobody can check: the service's label does not vouch for it
                out.unverified.add((item.chunk_id, rank))
                continue
        if item.tenant_id is not None:
            out.methods[BY_LABEL] += 1
            if item.tenant_id != caller_tenant:
                out.leaks.append(LeakRecord(item.chunk_id, rank, item.tenant_id, caller_tenant))
        elif require_labels:
            out.methods[BY_MISSING_LABEL] += 1
            out.leaks.append(LeakRecord(item.chunk_id, rank, None, caller_tenant))
        else:
            out.unverified.add((item.chunk_id, rank))
    return out


def find_leaks(
    items: Sequence[RankedItem],
    caller_tenant: str,
    require_labels: bool = False,
    ownership: ChunkOwnership | None = None,
) -> list[LeakRecord]:
    """Every item of ``items`` the caller's tenant must not see, with its 1-based rank."""
    return check_chunks(items, caller_tenant, ownership, require_labels).leaks


def _why_unverified(ownership: ChunkOwnership | None, no_caller: bool) -> str:
    parts = []
    if ownership is None:
        parts.append("responses carry no tenant_id for them and no --corpus was given to attribute them")
    else:
        parts.append("neither the corpus (by id or content) nor a tenant_id in the response attributes them")
    if no_caller:
        parts.append("some cases name no tenant to check against")
    return "; ".join(parts)


def assess_run(
    run: Run,
    case_tenants: Mapping[str, str | None],
    ownership: ChunkOwnership | None = None,
    require_labels: bool = False,
) -> CheckVerdict:
    """Check every returned chunk of the cases ``case_tenants`` names; merge the leaks found into each
    case's ``leaks`` (those recorded before are kept); set and return ``run.isolation``.

    A case's caller is the tenant it was asked as (``CaseRun.tenant_id``), else ``case_tenants[id]``.
    """
    methods: Counter[str] = Counter()
    total = verified = failures = 0
    no_caller = False
    for case_id, tenant in case_tenants.items():
        case = run.cases.get(case_id)
        if case is None or case.error is not None:
            continue
        caller = case.tenant_id or tenant
        no_caller = no_caller or (caller is None and bool(case.items))
        found = check_chunks(case.items, caller, ownership, require_labels)
        recorded = _keys(case.leaks)  # leaks recorded before (e.g. read from a results file) count too
        case.leaks = [
            *case.leaks,
            *(leak for leak in found.leaks if (leak.chunk_id, leak.rank) not in recorded),
        ]
        unverified = len(found.unverified - recorded)
        methods.update(found.methods)
        total += len(case.items)
        verified += len(case.items) - unverified
        failures += len(case.leaks)
    run.isolation = decide(
        CHECK,
        total=total,
        verified=verified,
        failures=failures,
        methods=methods,
        found=LEAKS,
        unverified_because=_why_unverified(ownership, no_caller)
        if total
        else "no chunk was returned (every case failed, or the results list no chunks)",
    )
    return run.isolation


def _keys(leaks: Sequence[LeakRecord]) -> set[tuple[str, int]]:
    return {(leak.chunk_id, leak.rank) for leak in leaks}
