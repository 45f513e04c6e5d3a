"""Tenant-isolation check on every ranking the runner receives, and its verdict over a whole run.

Each returned chunk's owner is established **from the corpus** (when an ownership index is given:
``ragaudit eval --corpus``, and always for a built-in pipeline): by id, by content and by every other
field the chunk carries, exactly as the tenant audit does (:mod:`ragaudit.security.ownership`; a
built-in pipeline's chunks by id and content, :mod:`ragaudit.runner.chunk_owners`). A chunk is a leak
when the corpus ties it to another tenant.

The ``tenant_id`` a response attaches is a **claim**: it can reveal a leak (a chunk labelled with
another tenant is one) but never verifies anything, so a chunk only the label speaks for is *not
verified*. Without a corpus, a service that stamps the caller's tenant on every foreign chunk would
otherwise pass. With ``require_labels``, an unlabelled chunk the corpus does not decide counts as a leak.

**Shared tenants** (``shared``, e.g. a public help centre labelled ``public``): their documents may be
returned to every tenant; such a chunk is counted as shared, never as a leak. Any other tenant's
chunk still is one.

Leaked chunks stay in the ranking (it is what the system returned); the leaks are listed beside it.
The run's verdict (:class:`ragaudit.verdict.CheckVerdict`): **fail** on any leak; otherwise **not
verified**, always, with the reason and the counts. Golden questions are asked by their own tenants,
so even when every returned chunk was checked the run only shows "no leak seen on N own-tenant
queries": that tests no isolation (nobody asked for another tenant's data). Only a cross-tenant audit
(``ragaudit audit-tenants``) verifies isolation, and the release gate takes it from there.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol, TypeGuard, runtime_checkable

from ragaudit.data.run import CaseRun, LeakRecord, RankedItem, Run
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


@runtime_checkable
class SaysHowOwned(Protocol):
    """A :class:`ChunkOwner` that also says how its owner was established (``"semantic"`` for
    :mod:`ragaudit.security.semantic_attribution`); an owner that does not say is counted ``corpus``."""

    @property
    def via(self) -> str: ...


@runtime_checkable
class ResponseOwnership(Protocol):
    """An ownership index that also reads the whole response a ranking came in (an HTTP body's
    ``debug``, ``facets``, ``suggest`` beside the results: the tenant audit's reading of it); the
    runner asks it when it has this method."""

    def response_foreign(
        self, returned: object, caller: str, query: str
    ) -> Sequence[tuple[str, frozenset[str]]]:
        """Every value of ``returned`` outside its chunk list that another tenant than ``caller`` owns:
        ``(JSON path, owners)``, e.g. ``("$.debug.nearest[0].doc_id", {"globex"})``."""
        ...


class ChunkOwnership(Protocol):
    """Decides who owns a returned chunk from the corpus, by id and content (the tenant audit's
    ``security.ownership.ChunkOwnership`` is one); the runner needs only this, so it does not import
    the security floor above it."""

    def attribute_item(self, item: RankedItem) -> ChunkOwner:
        """Who owns ``item``, from its id, content and every other field it carries."""
        ...


_CONFORMS: dict[tuple[type, type], bool] = {}


def _conforms(value: object, protocol: type) -> bool:
    """``isinstance(value, protocol)`` for a runtime-checkable Protocol, decided once per type of
    ``value`` (whether an owner says how it was established is a property of its class): the check
    itself reads every member, about 6 µs, and it runs for every returned chunk."""
    key = (type(value), protocol)
    found = _CONFORMS.get(key)
    if found is None:
        found = _CONFORMS[key] = isinstance(value, protocol)
    return found


def _says_how(who: ChunkOwner) -> TypeGuard[SaysHowOwned]:
    return _conforms(who, SaysHowOwned)


def _reads_responses(ownership: ChunkOwnership | None) -> TypeGuard[ResponseOwnership]:
    return ownership is not None and _conforms(ownership, ResponseOwnership)


CHECK = "tenant isolation"
BY_CORPUS = "corpus"
BY_LABEL = "response tenant_id"
"""A foreign label: the service itself says the chunk is another tenant's (a leak it reveals)."""
BY_MISSING_LABEL = "missing tenant_id (labels required)"
LEAKS = "cross-tenant chunk(s)"
OWN_TENANT = "own-tenant queries"
"""What a run of golden questions tests (each asked by its own tenant): not isolation."""
AUDIT_FIX = (
    "golden questions asked by their own tenants do not test isolation; verify it with 'ragaudit "
    "audit-tenants' and give its report to 'ragaudit gate --audit'"
)


@dataclass
class CaseIsolation:
    """The tenant check of one ranking: its leaks and how each chunk's owner was established."""

    leaks: list[LeakRecord] = field(default_factory=list)
    methods: Counter[str] = field(default_factory=Counter)
    unverified: set[tuple[str, int]] = field(default_factory=set)
    """``(chunk_id, rank)`` of every chunk whose owner could not be established."""
    claimed: int = 0
    """Chunks only the response's own ``tenant_id`` speaks for (a claim: not verified)."""
    shared: int = 0
    """Chunks of a shared tenant (returned to another tenant, allowed)."""


def check_chunks(
    items: Sequence[RankedItem],
    caller_tenant: str | None,
    ownership: ChunkOwnership | None = None,
    require_labels: bool = False,
    shared: frozenset[str] = frozenset(),
) -> CaseIsolation:
    """Check every item of one ranking returned to ``caller_tenant`` (see the module docstring)."""
    out = CaseIsolation()
    for rank, item in enumerate(items, start=1):
        if caller_tenant is None:
            out.unverified.add((item.chunk_id, rank))
            continue
        if ownership is not None:
            who = ownership.attribute_item(item)
            owners = who.foreign_owners(caller_tenant)
            foreign = sorted(owners - shared)
            if who.attributed or owners:  # a foreign field is a leak even beside unattributable text
                out.methods[who.via if _says_how(who) else BY_CORPUS] += 1
                if foreign:
                    out.leaks.append(LeakRecord(item.chunk_id, rank, ", ".join(foreign), caller_tenant))
                elif owners:
                    out.shared += 1
                continue
            if who.text_unfound:  # text nobody can check: the service's label does not vouch for it
                out.unverified.add((item.chunk_id, rank))
                continue
        label = item.tenant_id
        if label is not None and label != caller_tenant and label not in shared:
            out.methods[BY_LABEL] += 1  # the service says it is another tenant's: a leak it reveals
            out.leaks.append(LeakRecord(item.chunk_id, rank, label, caller_tenant))
        elif label is None and require_labels:
            out.methods[BY_MISSING_LABEL] += 1
            out.leaks.append(LeakRecord(item.chunk_id, rank, None, caller_tenant))
        else:  # no label, or a label that claims the caller (or a shared tenant): a claim verifies nothing
            out.claimed += label is not None
            out.unverified.add((item.chunk_id, rank))
    return out


BESIDE_RANKING = 0
"""The ``rank`` of a leak in the response's other values (its ``chunk_id`` is the value's JSON path)."""


def response_leaks(
    returned: object,
    caller: str,
    query: str,
    ownership: ChunkOwnership | None,
    shared: frozenset[str] = frozenset(),
) -> list[LeakRecord]:
    """The leak in the values of the whole response beside its chunks (when ``ownership`` reads them,
    :class:`ResponseOwnership`): one record per response, as the tenant audit counts it, at the first
    foreign value's path and naming every foreign owner (shared tenants' values are allowed)."""
    if not _reads_responses(ownership):
        return []
    found = [(path, owners - shared) for path, owners in ownership.response_foreign(returned, caller, query)]
    foreign = [(path, owners) for path, owners in found if owners]
    if not foreign:
        return []
    owners = sorted({owner for _, found_owners in foreign for owner in found_owners})
    return [LeakRecord(foreign[0][0], BESIDE_RANKING, ", ".join(owners), caller)]


def _why_unverified(ownership: ChunkOwnership | None, no_caller: bool, claimed: int) -> str:
    parts = []
    if ownership is None:
        parts.append("no --corpus was given to read their owners from")
    else:
        parts.append("the corpus (by id or content) does not attribute them")
    if claimed:
        parts.append(
            f"{claimed} carry a tenant_id naming the caller, but a label is the service's claim, not evidence"
        )
    if no_caller:
        parts.append("some cases name no tenant to check against")
    return "; ".join(parts)


def assess_run(
    run: Run,
    case_tenants: Mapping[str, str | None],
    ownership: ChunkOwnership | None = None,
    require_labels: bool = False,
    shared: frozenset[str] = frozenset(),
    checked: Mapping[str, CaseIsolation] | None = None,
) -> CheckVerdict:
    """Check every returned chunk of the cases ``case_tenants`` names; merge the leaks found into each
    case's ``leaks`` (those recorded before are kept); set and return ``run.isolation``.

    A case's caller is the tenant it was asked as (``CaseRun.tenant_id``), else ``case_tenants[id]``.
    ``checked[case_id]``: that case's ranking already checked for that caller, with these same
    ``ownership``, ``require_labels`` and ``shared`` (the runner checks each case as it comes back);
    it is used as it is, not checked again.
    """
    done = checked or {}
    methods: Counter[str] = Counter()
    total = verified = failures = claimed = shared_chunks = queries = 0
    no_caller = False
    for case_id, tenant in case_tenants.items():
        case = run.cases.get(case_id)
        if case is None or case.error is not None:
            continue
        caller = case.tenant_id or tenant
        no_caller = no_caller or (caller is None and bool(case.items))
        found = done.get(case_id)
        if found is None:  # e.g. a case resumed from a results file, or a run read from a file
            found = check_chunks(case.items, caller, ownership, require_labels, shared)
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
        claimed += found.claimed
        shared_chunks += found.shared
        queries += caller is not None
    verdict = decide(
        CHECK,
        total=total,
        verified=verified,
        failures=failures,
        methods=methods,
        found=LEAKS,
        unverified_because=_why_unverified(ownership, no_caller, claimed)
        if total
        else "no chunk was returned (every case failed, or the results list no chunks)",
    )
    if verdict.state == "pass":  # every chunk checked, none foreign: still no isolation test
        verdict = own_tenant_verdict(verdict, queries, shared_chunks)
    unasked = sum(
        1 for cid, t in case_tenants.items() if t is None and _failed_untenanted(run.cases.get(cid))
    )
    if unasked:  # never asked, so nothing of theirs was checked: said, not dropped silently
        verdict = replace(
            verdict,
            reason=f"{verdict.reason}; {unasked} case(s) without a tenant_id were not asked (no --tenant) "
            "and checked nothing",
        )
    run.isolation = verdict
    return run.isolation


def _failed_untenanted(case: CaseRun | None) -> bool:
    """A case with no tenant that failed (the runner refuses to ask one without a ``--tenant`` default)."""
    return case is not None and case.error is not None and case.tenant_id is None


def own_tenant_verdict(checked: CheckVerdict, queries: int, shared_chunks: int = 0) -> CheckVerdict:
    """``checked`` (every returned chunk's owner established, none foreign) as what it is: no leak seen
    on ``queries`` own-tenant queries, which verifies no isolation (state ``not_verified``)."""
    how = ", ".join(f"{n} by {m}" for m, n in checked.methods.items())
    also = f"; {shared_chunks} of a shared tenant, allowed" if shared_chunks else ""
    return CheckVerdict(
        CHECK,
        "not_verified",
        f"no leak seen on {queries} {OWN_TENANT} ({checked.verified} of {checked.total} returned chunks "
        f"checked{f' ({how})' if how else ''}{also}); {AUDIT_FIX}",
        checked.verified,
        checked.total,
        0,
        checked.methods,
    )


def every_chunk_checked(verdict: CheckVerdict) -> bool:
    """No leak, and every returned chunk's owner established (the own-tenant check held in full)."""
    return verdict.state != "fail" and verdict.total > 0 and verdict.verified == verdict.total


def _keys(leaks: Sequence[LeakRecord]) -> set[tuple[str, int]]:
    return {(leak.chunk_id, leak.rank) for leak in leaks}
