"""Tenant-isolation audit: issue every tenant's probes as every other tenant, and as hostile tenant ids.

Two sets of requests go to the retriever:

1. **Cross-tenant matrix.** Each probe of tenant ``T`` (:mod:`ragaudit.security.probes`) is asked as
   every other tenant (or, with ``callers_per_probe = N``, as N of them, rotating from a different
   start for each tenant, so every pair is still asked when ``N × probes per tenant >= tenants - 1``);
   generic probes are asked as every tenant. They run through the runner
   (bounded concurrency, timeouts, retries of transient failures, the batch fast path).
2. **Hostile tenant ids.** The first ``hostile_probes`` probes of each tenant are asked with tenant
   ids that are not tenants: none (``None``), empty and whitespace-only ids, wildcards (``*``, ``%``,
   ``.*``), an unknown id, and for each tenant its case and whitespace variants, a truncated prefix
   and an extension (``acme`` → ``ACME``, ``Acme``, `` acme``, ``acme ``, ``acm``, ``a``, ``acme_``,
   ``acme-eu``). Variants equal to a real tenant are skipped. Such a request must be refused or
   answered with nothing owned by any tenant; any attributed chunk is a leak.

Every returned chunk is attributed from the corpus (:mod:`ragaudit.security.ownership`), never from
the label the retriever attaches. A leak is recorded with its evidence: the probe, the caller, the
chunk, its rank, the owner(s), how ownership was decided, the claimed label and a short excerpt.

Verdict: ``leak`` when any leak was found; else ``incomplete`` when the share of failed matrix
requests is above ``max_error_rate`` (an audit whose requests failed proves nothing); else ``clean``.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from ragaudit.data.run import RankedItem, to_ranked_items
from ragaudit.data.schema import GoldenCase
from ragaudit.retrieval.protocol import Retriever
from ragaudit.runner.retry import NO_RETRY, RetryPolicy, call_with_retries
from ragaudit.security.error_rate import ErrorRate, check_error_rate, run_error_rate
from ragaudit.security.ownership import Attribution, OwnershipIndex
from ragaudit.security.probes import Probe
from ragaudit.version import __version__

SCHEMA_VERSION = 1
EXCERPT_CHARS = 160
MAX_LISTED = 200
"""At most this many unattributed chunks and hostile outcomes are listed in the report (all are counted)."""
FIXED_HOSTILE: tuple[tuple[str | None, str], ...] = (
    (None, "no tenant (null)"),
    ("", "empty string"),
    (" ", "whitespace only"),
    ("*", "wildcard *"),
    ("%", "SQL wildcard %"),
    (".*", "regex .*"),
    ("ragaudit-unknown-tenant", "unknown tenant"),
)
Verdict = Literal["clean", "leak", "incomplete"]


def tenant_variants(tenant: str, real: Iterable[str]) -> list[tuple[str, str]]:
    """Ids that are *not* ``tenant`` but that a sloppy filter might treat as it: ``(id, description)``."""
    candidates = [
        (tenant.upper(), "upper case"),
        (tenant.lower(), "lower case"),
        (tenant.capitalize(), "capitalised"),
        (f" {tenant}", "leading space"),
        (f"{tenant} ", "trailing space"),
        (f"{tenant}\n", "trailing newline"),
        (tenant[:-1], "truncated prefix"),
        (tenant[:1], "one-character prefix"),
        (f"{tenant}_", "extended with _"),
        (f"{tenant}-eu", "extended with -eu"),
    ]
    skip = set(real) | {tenant}
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    for value, what in candidates:
        if value.strip() and value not in skip and value not in seen:
            seen.add(value)
            out.append((value, f"{what} of {tenant!r}"))
    return out


def _excerpt(text: str | None) -> str:
    flat = " ".join((text or "").split())
    return flat[:EXCERPT_CHARS] + ("..." if len(flat) > EXCERPT_CHARS else "")


@dataclass(frozen=True)
class LeakFinding:
    """One foreign chunk served to a caller, with the evidence."""

    probe: Probe
    caller: str | None
    chunk_id: str
    rank: int
    owners: tuple[str, ...]
    """The tenant(s) other than the caller that own the chunk according to the corpus."""
    attributed_by: str
    owner_doc_id: str | None
    containment: float | None
    canaries: tuple[str, ...]
    claimed_tenant: str | None
    excerpt: str
    hostile: bool = False
    """The caller was a hostile tenant id (not a tenant of the corpus)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "probe": self.probe.to_json(),
            "caller": self.caller,
            "hostile_caller": self.hostile,
            "chunk_id": self.chunk_id,
            "rank": self.rank,
            "owner": list(self.owners),
            "attributed_by": self.attributed_by,
            "owner_doc_id": self.owner_doc_id,
            "containment": self.containment,
            "canaries": list(self.canaries),
            "claimed_tenant": self.claimed_tenant,
            "excerpt": self.excerpt,
        }


@dataclass(frozen=True)
class HostileOutcome:
    """What one request with a hostile tenant id got."""

    caller: str | None
    description: str
    probe_id: str
    outcome: Literal["refused", "empty", "served"]
    returned: int
    leaks: int
    reason: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "caller": self.caller,
            "description": self.description,
            "probe_id": self.probe_id,
            "outcome": self.outcome,
            "returned": self.returned,
            "leaks": self.leaks,
        }
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@dataclass(frozen=True)
class AuditOptions:
    """How the audit queries the retriever."""

    top_k: int = 10
    concurrency: int = 8
    timeout_s: float | None = 30.0
    callers_per_probe: int | None = None
    """Ask each tenant probe as at most this many other tenants (``None``: all of them)."""
    hostile_probes: int = 2
    """Probes per tenant asked with hostile tenant ids (0 skips that part)."""
    retry: RetryPolicy | None = None
    progress: bool | None = None


@dataclass
class TenantAudit:
    """The findings of one audit and what was asked."""

    tenants: tuple[str, ...]
    probes: list[Probe]
    options: AuditOptions
    leaks: list[LeakFinding]
    hostile: list[HostileOutcome]
    errors: ErrorRate
    unattributed: list[dict[str, Any]]
    unattributed_count: int
    label_mismatches: int
    """Returned chunks whose claimed tenant differs from the owner the corpus gives (relabelling)."""
    checked_chunks: int
    context: dict[str, Any] = field(default_factory=dict)
    created_at: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))

    def verdict(self, max_error_rate: float = 0.0) -> Verdict:
        if self.leaks:
            return "leak"
        return "clean" if check_error_rate(self.errors, max_error_rate).passed else "incomplete"

    def leaks_by_pair(self) -> dict[str, int]:
        """``"owner -> caller"``: how many leaks went from each owner to each caller."""
        pairs: Counter[str] = Counter()
        for leak in self.leaks:
            for owner in leak.owners:
                pairs[f"{owner} -> {leak.caller!r}" if leak.hostile else f"{owner} -> {leak.caller}"] += 1
        return dict(sorted(pairs.items()))

    def to_dict(self, max_error_rate: float = 0.0) -> dict[str, Any]:
        kinds = Counter(p.kind for p in self.probes)
        hostile_outcomes = Counter(h.outcome for h in self.hostile)
        label_trusting = sum(1 for leak in self.leaks if leak.claimed_tenant != leak.caller)
        verdict = self.verdict(max_error_rate)
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": "tenant-audit",
            "ragaudit_version": __version__,
            "created_at": self.created_at,
            "verdict": verdict,
            "passed": verdict == "clean",
            "max_error_rate": max_error_rate,
            **self.context,
            "tenants": list(self.tenants),
            "top_k": self.options.top_k,
            "probes": {"total": len(self.probes), "by_kind": dict(sorted(kinds.items()))},
            "requests": {"cross_tenant": self.errors.total, "hostile_tenant": len(self.hostile)},
            "checked_chunks": self.checked_chunks,
            "errors": self.errors.to_dict(),
            "leaks": {
                "count": len(self.leaks),
                "by_pair": self.leaks_by_pair(),
                "caught_by_labels_alone": label_trusting,
                "records": [leak.to_json() for leak in self.leaks],
            },
            "label_mismatches": self.label_mismatches,
            "hostile_tenants": {
                "requests": len(self.hostile),
                "refused": hostile_outcomes["refused"],
                "empty": hostile_outcomes["empty"],
                "served": hostile_outcomes["served"],
                "records": [h.to_json() for h in self.hostile if h.outcome == "served"][:MAX_LISTED],
            },
            "unattributed": {"count": self.unattributed_count, "records": self.unattributed[:MAX_LISTED]},
            "probe_list": [p.to_json() for p in self.probes],
        }

    def write_json(self, path: str | Path, max_error_rate: float = 0.0) -> None:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.to_dict(max_error_rate), indent=2, ensure_ascii=False)
        target.write_text(text + "\n", encoding="utf-8")


class _Checker:
    """Attributes returned chunks and collects leaks, unattributed chunks and label mismatches."""

    def __init__(self, ownership: OwnershipIndex) -> None:
        self.ownership = ownership
        self.real = set(ownership.tenants)
        self.leaks: list[LeakFinding] = []
        self.unattributed: list[dict[str, Any]] = []
        self.unattributed_count = 0
        self.mismatches = 0
        self.checked = 0

    def check(self, probe: Probe, caller: str | None, items: Sequence[RankedItem]) -> int:
        """Check one ranking; return how many leaks it held."""
        found = 0
        hostile = caller not in self.real
        for rank, item in enumerate(items, start=1):
            self.checked += 1
            who = self.ownership.attribute(item.chunk_id, item.content)
            if item.tenant_id is not None and who.attributed and item.tenant_id not in who.owners:
                self.mismatches += 1
            if not who.attributed:
                self.unattributed_count += 1
                if len(self.unattributed) < MAX_LISTED:
                    self.unattributed.append(
                        {"probe_id": probe.id, "caller": caller, "chunk_id": item.chunk_id, "rank": rank}
                    )
                continue
            foreign = who.owners if hostile else who.foreign_owners(caller)
            if foreign:
                found += 1
                self.leaks.append(self._finding(probe, caller, rank, item, who, foreign, hostile))
        return found

    @staticmethod
    def _finding(
        probe: Probe,
        caller: str | None,
        rank: int,
        item: RankedItem,
        who: Attribution,
        foreign: frozenset[str],
        hostile: bool,
    ) -> LeakFinding:
        return LeakFinding(
            probe,
            caller,
            item.chunk_id,
            rank,
            tuple(sorted(foreign)),
            who.method,
            who.doc_id,
            round(who.containment, 4) if who.containment is not None else None,
            tuple(c.secret for c in who.canaries),
            item.tenant_id,
            _excerpt(item.content),
            hostile,
        )


def plan_matrix(
    probes: Sequence[Probe], tenants: Sequence[str], callers_per_probe: int | None = None
) -> list[tuple[Probe, str]]:
    """Every ``(probe, caller)`` request of the cross-tenant matrix (see the module docstring)."""
    plan: list[tuple[Probe, str]] = []
    seen: Counter[str | None] = Counter()
    position = {t: i for i, t in enumerate(tenants)}
    for probe in probes:
        others = [t for t in tenants if t != probe.tenant_id]
        if callers_per_probe is not None and probe.tenant_id is not None and callers_per_probe < len(others):
            # rotate through the other tenants, each tenant starting at its own place in the list
            offset = position.get(probe.tenant_id, 0) + seen[probe.tenant_id] * callers_per_probe
            others = [others[(offset + j) % len(others)] for j in range(callers_per_probe)]
        seen[probe.tenant_id] += 1
        plan += [(probe, caller) for caller in others]
    return plan


def plan_hostile(
    probes: Sequence[Probe], tenants: Sequence[str], per_tenant: int
) -> list[tuple[Probe, str | None, str]]:
    """Every ``(probe, hostile caller, description)`` request."""
    if per_tenant <= 0:
        return []
    plan: list[tuple[Probe, str | None, str]] = []
    for tenant in tenants:
        own = [p for p in probes if p.tenant_id == tenant][:per_tenant]
        variants: list[tuple[str | None, str]] = [*FIXED_HOSTILE, *tenant_variants(tenant, tenants)]
        plan += [(probe, caller, what) for probe in own for caller, what in variants]
    return plan


async def _hostile_requests(
    retriever: Retriever,
    plan: Sequence[tuple[Probe, str | None, str]],
    checker: _Checker,
    options: AuditOptions,
) -> list[HostileOutcome]:
    gate = asyncio.Semaphore(options.concurrency)

    async def one(probe: Probe, caller: str | None, what: str) -> HostileOutcome:
        async def fetch() -> list[RankedItem]:
            tenant: Any = caller  # deliberately not a usable tenant: the point of the request
            return to_ranked_items(
                await retriever.search(tenant_id=tenant, query=probe.text, top_k=options.top_k)
            )

        async with gate:
            got = await call_with_retries(
                fetch, NO_RETRY, f"hostile:{probe.id}:{caller!r}", options.timeout_s
            )
        if got.error is not None or got.value is None:
            return HostileOutcome(caller, what, probe.id, "refused", 0, 0, got.error)
        leaks = checker.check(probe, caller, got.value)
        outcome: Literal["empty", "served"] = "served" if got.value else "empty"
        return HostileOutcome(caller, what, probe.id, outcome, len(got.value), leaks)

    return list(await asyncio.gather(*(one(*request) for request in plan)))


async def audit_tenants(
    retriever: Retriever,
    ownership: OwnershipIndex,
    probes: Sequence[Probe],
    options: AuditOptions | None = None,
    *,
    context: dict[str, Any] | None = None,
) -> TenantAudit:
    """Run the audit (see the module docstring) and return its findings."""
    from ragaudit.runner.execute import run_cases

    opts = options or AuditOptions()
    tenants = ownership.tenants
    matrix = plan_matrix(probes, tenants, opts.callers_per_probe)
    cases = [GoldenCase(f"{probe.id}@{caller}", probe.text, (), tenant_id=caller) for probe, caller in matrix]
    run = await run_cases(
        retriever,
        cases,
        opts.top_k,
        concurrency=opts.concurrency,
        timeout_s=opts.timeout_s,
        name="tenant-audit",
        retry=opts.retry,
        progress=opts.progress,
    )
    checker = _Checker(ownership)
    for (probe, caller), case in zip(matrix, cases, strict=True):
        outcome = run.cases[case.id]
        if outcome.error is None:
            checker.check(probe, caller, outcome.items)
    hostile = await _hostile_requests(
        retriever, plan_hostile(probes, tenants, opts.hostile_probes), checker, opts
    )
    end = getattr(retriever, "end_session", None)
    if end is not None and inspect.iscoroutinefunction(end):
        await end()
    return TenantAudit(
        tenants,
        list(probes),
        opts,
        checker.leaks,
        hostile,
        run_error_rate(run),
        checker.unattributed,
        checker.unattributed_count,
        checker.mismatches,
        checker.checked,
        dict(context or {}),
    )
