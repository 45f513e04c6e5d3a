"""Whether a clean tenant audit asked enough distinct probes of each tenant to verify isolation.

The request floor (:mod:`ragaudit.gates.audit_size`) counts requests, repeats included: rounds re-ask
the same probes at other ``top_k`` values and concurrency levels, so one probe per tenant asked in forty
rounds meets it while it tested one query's ranking per tenant. The gate therefore also asks that every
audited tenant (a ``--shared-tenant`` excepted) owns at least ``min_probes_per_tenant`` distinct probes
(distinct query texts, so a probe listed twice under two ids counts once): default
:data:`DEFAULT_MIN_PROBES_PER_TENANT`, ``audit-tenants``' default ``--probes-per-tenant``.

A tenant with few documents makes fewer probes than that under the default plan (one document makes
about six). When the audit's corpus is still at the path it names with the same sha256, a tenant
below the floor is held only to what the default generator makes of its documents; when it is not,
the shortfall cannot be told from a small ``--probes-per-tenant`` and the audit does not verify
isolation (the message says why and how to lower the floor).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ragaudit.security.probes import DEFAULT_PER_TENANT
from ragaudit.verdict import POLICY_LOWERED

DEFAULT_MIN_PROBES_PER_TENANT = DEFAULT_PER_TENANT
"""``ragaudit audit-tenants``' default ``--probes-per-tenant`` (24)."""

REGENERATE_LIMIT = 20_000
"""The largest corpus (documents) the gate re-reads to learn how many probes a tenant allows."""

PROBES_FIX = (
    "re-run 'ragaudit audit-tenants' with --probes-per-tenant left at its default ({floor}) or higher, "
    "or lower [security] min_probes_per_tenant in the policy (the gate then says the floor was lowered)"
)


def _shared(data: Mapping[str, Any]) -> set[str]:
    holder = data.get("shared_tenants")
    shared = holder.get("tenants") if isinstance(holder, Mapping) else holder
    return {str(t) for t in shared} if isinstance(shared, list) else set()


def distinct_probes(data: Mapping[str, Any]) -> dict[str, int]:
    """Distinct probe texts per owning tenant in the audit's ``probe_list`` (generic probes excluded)."""
    texts: dict[str, set[str]] = defaultdict(set)
    probes = data.get("probe_list")
    for probe in probes if isinstance(probes, list) else []:
        if not isinstance(probe, Mapping) or probe.get("tenant") is None:
            continue
        text = probe.get("text")
        texts[str(probe["tenant"])].add(" ".join(text.split()).casefold() if isinstance(text, str) else "")
    return {tenant: len(found) for tenant, found in texts.items()}


def _allowed(data: Mapping[str, Any], floor: int) -> dict[str, int] | None:
    """How many probes the default generator makes of each tenant's documents, capped at ``floor``
    (``None``: the audit's corpus cannot be read here, or is too large to re-read)."""
    from ragaudit.artifacts.provenance import sha256_of
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.errors import RagauditError
    from ragaudit.security.probes import generate_probes

    corpus = data.get("corpus")
    if not isinstance(corpus, Mapping):
        return None
    path, sha, documents = corpus.get("path"), corpus.get("sha256"), corpus.get("documents")
    if not isinstance(path, str) or not isinstance(documents, int) or documents > REGENERATE_LIMIT:
        return None
    try:
        if not Path(path).is_file() or sha256_of(path) != sha:
            return None
        made = generate_probes(load_corpus(path).documents, per_tenant=max(floor, 1), generic=())
    except (OSError, ValueError, TypeError, RagauditError):
        return None
    counts: dict[str, int] = defaultdict(int)
    for probe in made:
        if probe.tenant_id is not None:
            counts[probe.tenant_id] += 1
    return dict(counts)


def too_few_probes(data: Mapping[str, Any], min_probes: int = DEFAULT_MIN_PROBES_PER_TENANT) -> str | None:
    """Why a clean tenant audit asked too few distinct probes of some tenant (``None``: enough)."""
    raw = data.get("tenants")
    tenants = [str(t) for t in raw] if isinstance(raw, list) else []
    shared = _shared(data)
    counts = distinct_probes(data)
    short = {t: counts.get(t, 0) for t in tenants if t not in shared and counts.get(t, 0) < min_probes}
    if not short:
        return None
    allowed = _allowed(data, min_probes)
    if allowed is not None:
        short = {t: n for t, n in short.items() if n < min(min_probes, allowed.get(t, 0))}
        if not short:
            return None
    listed = ", ".join(f"{t} {n}" for t, n in sorted(short.items()))
    unread = (
        ""
        if allowed is not None
        else " (the audit's corpus could not be re-read here to learn whether its documents allow more)"
    )
    return (
        f"it asked too few distinct probes to verify isolation: {listed} distinct probe(s) < "
        f"min_probes_per_tenant {min_probes}{unread}; requests repeated over rounds re-ask the same "
        "queries and test no other ranking; " + PROBES_FIX.format(floor=DEFAULT_MIN_PROBES_PER_TENANT)
    )


def lowered_probes_note(min_probes: int) -> str | None:
    """What a pass must say when the policy lowered the distinct-probe floor (``None``: it did not)."""
    if min_probes >= DEFAULT_MIN_PROBES_PER_TENANT:
        return None
    return (
        f"audit size floor {POLICY_LOWERED}: min_probes_per_tenant {min_probes} "
        f"(default {DEFAULT_MIN_PROBES_PER_TENANT}: audit-tenants' default --probes-per-tenant)"
    )
