"""Tenant-isolation audit: ask every tenant's probes as their owner, as every other tenant, and as
hostile tenant ids, under several ``top_k`` values, concurrency levels and rounds.

What is sent, in which order, and how hard that looks is :mod:`ragaudit.security.request_plan`
(owner-first ordering, ``top_k`` values up to the service's maximum, concurrency levels, a request
budget spread over rounds, the detection power); how it is sent is :mod:`ragaudit.security.request_loop`
(bounded concurrency in plan order, retries of transient failures, a plain-form retry of rejected
probes); the hostile ids are :mod:`ragaudit.security.hostile_tenants` (lists, roles, wildcards,
encodings, JSON arrays, path segments, near misses, Unicode look-alikes). A hostile id must be refused or
answered with nothing owned by any tenant; any attributed chunk is a leak. Before the rounds, the request
mutations of :mod:`ragaudit.security.request_mutations` (query shapes, pagination, the tenant a second
time in a header or parameter) are applied to a sample of probes; :mod:`ragaudit.security.mutation_tally`
counts what every mutation sent and found.

Every returned chunk is attributed from the corpus (:mod:`ragaudit.security.ownership`), never from
the label the retriever attaches. A leak is recorded with its evidence: the probe, the caller, the
chunk, its rank, the owner(s), how ownership was decided, the claimed label, a short excerpt and how it
was asked (``top_k``, round, concurrency, the request's position among all requests sent).

Verdict (:mod:`ragaudit.security.audit_verdict`): ``leak`` when any leak was found; else
``incomplete`` when the share of failed tenant requests (owner, cross-tenant, generic; each failed one
is listed as *unverified*) is above ``max_error_rate`` (an audit whose requests failed proves nothing);
else ``not-verified`` when returned chunks could not be attributed (unless ``allow_unattributed`` and
at least ``min_attributed`` of them were; always when none could); else ``clean``.

**Shared tenants** (``AuditOptions.shared_tenants``): their documents may be served to every tenant;
such chunks are counted as shared, not as leaks, and their own probes are not asked as other tenants'
(they would only find what everyone may see). **Semantic attribution** (``semantic``,
:mod:`ragaudit.security.semantic_attribution`) places rewritten text that exact attribution left
unattributed; it is counted apart (``semantic`` in the report).

**Query vectors are remembered** for the length of the audit: the dense parts of an in-process
pipeline embed each distinct probe text once (:mod:`ragaudit.retrieval.query_memo`; the audit asks
each probe dozens of times). The ONNX embedders are batch-invariant, so every ranking, and the report,
is what it would be without the memo.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from ragaudit.retrieval.protocol import Retriever
from ragaudit.retrieval.query_memo import remember_queries_in
from ragaudit.retrieval.request_extras import channels_of
from ragaudit.retry import RetryPolicy
from ragaudit.runner.execute import _call_hook
from ragaudit.runner.progress import progress_bar
from ragaudit.security.audit_verdict import DEFAULT_MIN_ATTRIBUTED, Verdict, audit_verdict, stopped_sentence
from ragaudit.security.error_rate import ErrorRate, check_error_rate, classify_error, error_rate_of
from ragaudit.security.hostile_tenants import FIXED_HOSTILE as FIXED_HOSTILE
from ragaudit.security.hostile_tenants import tenant_variants as tenant_variants
from ragaudit.security.leak_checker import MAX_LISTED, LeakChecker, LeakFinding, record_json
from ragaudit.security.mutation_tally import MutationTally
from ragaudit.security.ownership import OwnershipIndex
from ragaudit.security.probes import Probe
from ragaudit.security.request_loop import UNREACHABLE_KINDS, Answer, Asker, discover_max_top_k
from ragaudit.security.request_mutations import MutationOptions, plan_mutations
from ragaudit.security.request_plan import (
    DEFAULT_BUDGET,
    DEFAULT_CONCURRENCY_LEVELS,
    DEFAULT_MAX_TOP_K,
    AuditRequest,
    discovery_ladder,
    plan_round,
    power_summary,
    rounds_for,
    top_k_values,
)
from ragaudit.security.request_plan import plan_matrix as plan_matrix
from ragaudit.security.semantic_attribution import SemanticAttributor
from ragaudit.verdict import CheckVerdict
from ragaudit.version import __version__

SCHEMA_VERSION = 1
DEFAULT_MAX_RECORDS = 200
"""Leak records listed in the report by default (``--max-records``); every leak is counted."""


@dataclass(frozen=True)
class HostileOutcome:
    """What one request with a hostile tenant id got."""

    caller: str | None
    description: str
    probe_id: str
    outcome: Literal["refused", "failed", "empty", "served"]
    """``failed``: no answer at all (no connection, or a timeout), which is not a refusal."""
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
    """How the audit queries the retriever (the dimensions: :mod:`ragaudit.security.request_plan`)."""

    top_k: int = 10
    """The audit's ``k``: one of the ``top_k`` values, and the one hostile callers ask with."""
    timeout_s: float | None = 30.0
    callers_per_probe: int | None = None
    """Ask each tenant probe as at most this many other tenants (``None``: all of them)."""
    hostile_probes: int = 2
    """Probes per tenant asked with hostile tenant ids (0 skips that part)."""
    retry: RetryPolicy | None = None
    progress: bool | None = None
    top_k_values: tuple[int, ...] | None = None
    """``top_k`` values asked (``None``: 1, ``top_k`` and ``max_top_k``), capped at the service's max."""
    max_top_k: int = DEFAULT_MAX_TOP_K
    concurrency_levels: tuple[int, ...] = DEFAULT_CONCURRENCY_LEVELS
    budget: int = DEFAULT_BUDGET
    """At least this many requests (the plan is repeated in rounds until it is reached)."""
    rounds: int | None = None
    """Exactly this many rounds (``None``: ``max(len(concurrency_levels), ceil(budget / round size))``)."""
    allow_unattributed: bool = False
    """Accept returned chunks nothing attributes (else the audit is *not verified*), only when at least
    ``min_attributed`` of the returned chunks were attributed."""
    min_attributed: float = DEFAULT_MIN_ATTRIBUTED
    shared_tenants: frozenset[str] = frozenset()
    """Tenants whose documents may be served to every tenant (counted as shared, never as leaks)."""
    mutations: MutationOptions = field(default_factory=MutationOptions)
    """The request mutations applied to a sample of probes (``per_tenant=0``: none)."""
    max_records: int = DEFAULT_MAX_RECORDS
    """The report lists the first this many leak records (every leak is counted, by class and pair)."""

    def __post_init__(self) -> None:
        for name in ("top_k", "max_top_k"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be a positive integer (got {getattr(self, name)})")
        if not self.concurrency_levels or min(self.concurrency_levels) < 1:
            raise ValueError(f"concurrency levels must be positive integers (got {self.concurrency_levels})")
        if self.max_records < 0:
            raise ValueError(f"max_records must be 0 or more (got {self.max_records})")
        if self.budget < 0 or (self.rounds is not None and self.rounds < 1):
            raise ValueError("budget must be >= 0 and rounds >= 1")
        if not 0.0 <= self.min_attributed <= 1.0:
            raise ValueError(f"min_attributed must be between 0 and 1 (got {self.min_attributed})")


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
    asking: dict[str, Any] = field(default_factory=dict)
    """How hard the audit looked: requests by part, ``top_k`` values, concurrency levels, rounds, power."""
    unverified: list[dict[str, Any]] = field(default_factory=list)
    """Tenant requests that failed even in plain form (each also counts in ``errors``)."""
    stopped: dict[str, Any] | None = None
    """Why the audit stopped early (``reason``, ``not_sent``), when the service could not be reached."""
    shared_chunks: int = 0
    """Returned chunks of a shared tenant served to another caller (allowed, not leaks)."""
    semantic: dict[str, Any] | None = None
    """Semantic attribution's settings and counts (``None``: not asked for)."""

    def _also(self) -> str:
        """Shared and semantically attributed chunks, in words, for the verdict's counts."""
        parts = []
        if self.semantic is not None:
            parts.append(
                f"semantic: {self.semantic['chunks']} chunks, margin >= {self.semantic['settings']['margin']:g}"
            )
        if self.shared_chunks:
            tenants = ", ".join(sorted(self.options.shared_tenants))
            parts.append(f"{self.shared_chunks} chunk(s) of shared tenants ({tenants}), allowed")
        return f" ({'; '.join(parts)})" if parts else ""

    def stopped_text(self) -> str | None:
        """The early stop in words, for the verdict (``None``: the audit sent every planned request)."""
        if not self.stopped:
            return None
        return stopped_sentence(self.stopped["not_sent"], self.stopped["reason"])

    def judged(self, max_error_rate: float = 0.0) -> tuple[Verdict, CheckVerdict]:
        """The verdict and the tenant-isolation check in three states (:mod:`~ragaudit.security.audit_verdict`)."""
        return audit_verdict(
            leaks=len(self.leaks),
            checked=self.checked_chunks,
            unattributed=self.unattributed_count,
            failed=self.errors.failed,
            tenant_requests=self.errors.total,
            errors_within_limit=check_error_rate(self.errors, max_error_rate).passed,
            allow_unattributed=self.options.allow_unattributed,
            stopped=self.stopped_text(),
            min_attributed=self.options.min_attributed,
            also=self._also(),
        )

    def verdict(self, max_error_rate: float = 0.0) -> Verdict:
        return self.judged(max_error_rate)[0]

    def leaks_by_pair(self) -> dict[str, int]:
        """``"owner -> caller"``: how many leaks went from each owner to each caller."""
        pairs: Counter[str] = Counter()
        for leak in self.leaks:
            for owner in leak.owners:
                pairs[f"{owner} -> {leak.caller!r}" if leak.hostile else f"{owner} -> {leak.caller}"] += 1
        return dict(sorted(pairs.items()))

    def leaks_json(self) -> dict[str, Any]:
        """The leaks: the total, counts per class, part and pair, and the first ``max_records`` records."""
        listed = self.leaks[: self.options.max_records]
        return {
            "count": len(self.leaks),
            "to_hostile_ids": sum(1 for leak in self.leaks if leak.hostile),
            "by_pair": self.leaks_by_pair(),
            "by_class": dict(sorted(Counter(leak.leak_class for leak in self.leaks).items())),
            "by_part": dict(
                sorted(Counter((leak.asked or {}).get("part", "unknown") for leak in self.leaks).items())
            ),
            "caught_by_labels_alone": sum(1 for leak in self.leaks if leak.claimed_tenant != leak.caller),
            "records_listed": len(listed),
            "records": [record_json(leak) for leak in listed],
        }

    def to_dict(self, max_error_rate: float = 0.0) -> dict[str, Any]:
        kinds = Counter(p.kind for p in self.probes)
        hostile_outcomes = Counter(h.outcome for h in self.hostile)
        verdict, isolation = self.judged(max_error_rate)
        return {
            "schema_version": SCHEMA_VERSION,
            "kind": "tenant-audit",
            "ragaudit_version": __version__,
            "created_at": self.created_at,
            "verdict": verdict,
            "passed": verdict == "clean",
            "isolation": isolation.to_json(),
            "max_error_rate": max_error_rate,
            **self.context,
            "tenants": list(self.tenants),
            "top_k": self.options.top_k,
            "probes": {"total": len(self.probes), "by_kind": dict(sorted(kinds.items()))},
            "requests": {
                "total": self.asking.get("requests", {}).get("total", self.errors.total + len(self.hostile)),
                "tenant": self.errors.total,
                **self.asking.get("planned", {}),
                "hostile_tenant": len(self.hostile),
            },
            "asking": self.asking,
            "unverified": {"count": len(self.unverified), "records": self.unverified[:MAX_LISTED]},
            "stopped": self.stopped,
            "checked_chunks": self.checked_chunks,
            "errors": self.errors.to_dict(),
            "leaks": self.leaks_json(),
            "label_mismatches": self.label_mismatches,
            "hostile_tenants": {
                "requests": len(self.hostile),
                "refused": hostile_outcomes["refused"],
                "empty": hostile_outcomes["empty"],
                "served": hostile_outcomes["served"],
                "failed": hostile_outcomes["failed"],
                "records": [h.to_json() for h in self.hostile if h.outcome == "served"][:MAX_LISTED],
            },
            "unattributed": {
                "count": self.unattributed_count,
                "share": round(self.unattributed_count / self.checked_chunks, 4)
                if self.checked_chunks
                else None,
                "allowed": self.options.allow_unattributed,
                "min_attributed": self.options.min_attributed,
                "records": self.unattributed[:MAX_LISTED],
            },
            "shared_tenants": {"tenants": sorted(self.options.shared_tenants), "chunks": self.shared_chunks},
            "semantic": self.semantic,
            "probe_list": [p.to_json() for p in self.probes],
        }

    def write_json(self, path: str | Path, max_error_rate: float = 0.0) -> None:
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.to_dict(max_error_rate), indent=2, ensure_ascii=False)
        target.write_text(text + "\n", encoding="utf-8")


def _hostile_outcome(answer: Answer, leaks: int) -> HostileOutcome:
    request = answer.request
    what = request.hostile.description if request.hostile is not None else ""
    if answer.items is None:
        unanswered = answer.error is not None and classify_error(answer.error) in UNREACHABLE_KINDS
        outcome: Literal["refused", "failed", "empty", "served"] = "failed" if unanswered else "refused"
        return HostileOutcome(request.caller, what, request.probe.id, outcome, 0, leaks, answer.error)
    return HostileOutcome(
        request.caller,
        what,
        request.probe.id,
        "served" if answer.items else "empty",
        len(answer.items),
        leaks,
    )


def _asked(answer: Answer) -> dict[str, Any]:
    request = answer.request
    out: dict[str, Any] = {
        "top_k": request.top_k,
        "round": request.round,
        "concurrency": answer.concurrency,
        "sequence": answer.sequence,
        "part": request.part,
    }
    if request.mutated is not None:
        out["mutation"] = request.mutated.mutation.name
        out["text"] = request.mutated.text
    if answer.plain_retry:
        out["plain_text"] = answer.asked_text
    return out


@dataclass
class _Collector:
    """Checks every answer as it arrives and keeps what the report needs."""

    checker: LeakChecker
    hostile: list[HostileOutcome] = field(default_factory=list)
    tenant_answers: list[tuple[str, str | None, int]] = field(default_factory=list)
    unverified: list[dict[str, Any]] = field(default_factory=list)
    by_part: Counter[str] = field(default_factory=Counter)
    """Requests sent per part, plain-form retries included."""
    planned: Counter[str] = field(default_factory=Counter)
    """Planned requests per part (a plain-form retry is the same planned request)."""
    answered: int = 0
    plain_retries: int = 0
    plain_recovered: int = 0
    tally: MutationTally = field(default_factory=MutationTally)

    def __call__(self, answer: Answer) -> None:
        request = answer.request
        self.by_part[request.part] += 1 + answer.plain_retry
        self.planned[request.part] += 1
        self.plain_retries += answer.plain_retry
        found = 0
        if answer.items is not None:
            self.answered += 1
            self.plain_recovered += answer.plain_retry
        if answer.items is not None or answer.response is not None:  # a refusal's body is read too
            found = self.checker.check(
                request.probe, request.caller, answer.items or [], answer.asked_text, answer.response
            )
            leaks = self.checker.leaks
            for i in range(len(leaks) - found, len(leaks)):
                leaks[i] = replace(leaks[i], asked=_asked(answer))
        self.tally.add(answer, found)
        if request.part == "hostile":
            self.hostile.append(_hostile_outcome(answer, found))
        elif request.part != "mutation" and (request.part != "discovery" or _unreached(answer)):
            # a rejected mutation is no failure, nor a top_k the discovery found refused; a discovery
            # request that never reached the service is (it counts among the errors)
            self.tenant_answers.append((request.key, answer.error, answer.attempts))
            if answer.error is not None:
                self.unverified.append(
                    {**request.to_json(), "text": request.probe.text, "reason": answer.error}
                )


def _unreached(answer: Answer) -> bool:
    """The request got no answer: no connection or a timeout (not a refusal)."""
    return answer.error is not None and classify_error(answer.error) in UNREACHABLE_KINDS


async def audit_tenants(
    retriever: Retriever,
    ownership: OwnershipIndex,
    probes: Sequence[Probe],
    options: AuditOptions | None = None,
    *,
    context: dict[str, Any] | None = None,
    semantic: SemanticAttributor | None = None,
) -> TenantAudit:
    """Run the audit (see the module docstring) and return its findings."""
    opts = options or AuditOptions()
    tenants = ownership.tenants
    probes = [p for p in probes if p.tenant_id not in opts.shared_tenants]  # everyone may see those
    collector = _Collector(LeakChecker(ownership, opts.shared_tenants, semantic))
    asker = Asker(retriever, opts.timeout_s, opts.retry or RetryPolicy(), collector)
    asker.on_send = collector.checker.note_sent
    await _call_hook(retriever, "start_session", concurrency=max(opts.concurrency_levels))
    remembered = remember_queries_in(retriever)  # a probe is asked many times: embed its text once
    try:
        wanted = top_k_values(opts.top_k, opts.max_top_k, opts.top_k_values)
        top_ks, max_k = await _top_ks_the_service_accepts(asker, probes, wanted, opts.top_k)
        mutated = _mutated_requests(retriever, probes, tenants, opts, collector.tally, max(top_ks))
        await asker.ask_all(mutated, opts.concurrency_levels[0])
        one_round = len(
            plan_round(
                probes,
                tenants,
                top_ks,
                opts.top_k,
                0,
                callers_per_probe=opts.callers_per_probe,
                hostile_probes=opts.hostile_probes,
            )
        )
        left = max(0, opts.budget - len(mutated))
        rounds = rounds_for(one_round, left, len(opts.concurrency_levels), opts.rounds)
        bar = progress_bar(one_round * rounds, enabled=opts.progress, desc="tenant-audit")
        for round_no in range(rounds):
            plan = plan_round(
                probes,
                tenants,
                top_ks,
                opts.top_k,
                round_no,
                callers_per_probe=opts.callers_per_probe,
                hostile_probes=opts.hostile_probes,
            )
            level = opts.concurrency_levels[round_no % len(opts.concurrency_levels)]
            await asker.ask_all(plan, level)
            bar.update(len(plan))
        bar.close()
    finally:
        remembered.forget()
        await _call_hook(retriever, "end_session")
    checker = collector.checker
    asking = {
        "requests": {
            "total": asker.sent,
            "answered": collector.answered,
            "by_part": dict(sorted(collector.by_part.items())),
        },
        "top_k_values": list(top_ks),
        "max_top_k": max_k,
        "concurrency_levels": list(opts.concurrency_levels[:rounds]),
        "rounds": rounds,
        "requests_per_round": one_round,
        "budget": opts.budget,
        "owner_first": True,
        "plain_retries": {"count": collector.plain_retries, "recovered": collector.plain_recovered},
        "planned": {
            "owner": collector.planned["owner"],
            "cross_tenant": collector.planned["cross-tenant"] + collector.planned["generic"],
            "discovery": collector.planned["discovery"],
            "mutation": collector.planned["mutation"],
        },
        "mutations": collector.tally.to_json(),
        "detection_power": power_summary(collector.answered),
    }
    return TenantAudit(
        tenants,
        list(probes),
        opts,
        checker.leaks,
        collector.hostile,
        error_rate_of(collector.tenant_answers),
        checker.unattributed,
        checker.unattributed_count,
        checker.mismatches,
        checker.checked,
        dict(context or {}),
        asking=asking,
        unverified=collector.unverified,
        stopped=(
            {"reason": asker.stopper.reason, "not_sent": asker.stopper.not_sent}
            if asker.stopper.reason is not None and asker.stopper.not_sent
            else None  # stopped after the last planned request: every request was sent (and counted)
        ),
        shared_chunks=checker.shared_chunks,
        semantic=checker.semantic_summary(),
    )


def _mutated_requests(
    retriever: Retriever,
    probes: Sequence[Probe],
    tenants: Sequence[str],
    opts: AuditOptions,
    tally: MutationTally,
    largest_k: int,
) -> list[AuditRequest]:
    """The request mutations to send (registered in ``tally``, those without a channel as not applicable);
    a mutation's own ``top_k`` is capped at ``largest_k``, the largest the rounds ask."""
    fields = getattr(retriever, "request_fields", None)
    tenant_field = fields.get("tenant_id", "tenant_id") if isinstance(fields, Mapping) else "tenant_id"
    catalogue = replace(opts.mutations, tenant_field=tenant_field).catalogue(opts.top_k)
    planned, skipped = plan_mutations(
        probes, tenants, catalogue, opts.mutations.per_tenant, channels_of(retriever)
    )
    tally.planned(catalogue, skipped, f"{type(retriever).__name__} sends only tenant_id, query and top_k")
    return [
        AuditRequest(
            m.probe,
            m.caller,
            min(m.mutation.top_k, largest_k) if m.mutation.top_k else opts.top_k,
            0,
            "mutation",
            mutated=m,
        )
        for m in planned
    ]


async def _top_ks_the_service_accepts(
    asker: Asker, probes: Sequence[Probe], wanted: tuple[int, ...], audit_k: int
) -> tuple[tuple[int, ...], dict[str, Any]]:
    """``wanted`` capped at the largest ``top_k`` the service answers (found by asking the first tenant
    probe as its owner at the largest value, then halving while it is rejected), and what was found."""
    largest = max(wanted)
    first = next((p for p in probes if p.tenant_id is not None), None)
    found: dict[str, Any] = {"requested": largest, "accepted": largest, "rejected": []}
    if first is None or largest <= audit_k:
        return wanted, found
    request = AuditRequest(first, first.tenant_id, largest, -1, "discovery")
    accepted, rejected, answers = await discover_max_top_k(asker, request, discovery_ladder(largest, audit_k))
    # a top_k is rejected only by an answer (a refusal); a request that never reached the service is not one
    unreached = {a.request.top_k for a in answers if a.error and classify_error(a.error) in UNREACHABLE_KINDS}
    rejected = [k for k in rejected if k not in unreached]
    limit = accepted if accepted is not None else audit_k
    found.update(accepted=accepted, rejected=rejected)
    capped = tuple(sorted({min(k, limit) for k in wanted}))
    return capped, found
