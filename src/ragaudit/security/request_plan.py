"""How hard the tenant audit looks: the requests it sends, in what order, and what that can detect.

Many real leaks only show under some conditions: a ``top_k`` other than the usual one, many
requests in flight, a warm path after the service has answered N calls, a rare race, a cache filled
by the owner of the data. One **round** of the audit asks, for every ``top_k`` value in turn:

- every tenant probe **owner first**: the tenant that owns the probe asks it, then every other
  tenant (or ``callers_per_probe`` of them) asks the same text at the same ``top_k``, so a cache keyed
  without the tenant is filled by the owner and then served to the others, as it fails in production;
- every generic probe as every tenant;

then asks each tenant's first ``hostile_probes`` probes with hostile tenant ids
(:mod:`ragaudit.security.hostile_tenants`) at the audit's ``top_k``.

Rounds run one after another; round ``r`` (from 0) runs at ``concurrency_levels[r mod L]`` requests in
flight (requests leave in plan order, so at concurrency 1 the order above is exact). There are
``max(L, ceil(budget / round size))`` rounds unless ``rounds`` fixes the number.

``top_k`` values: :func:`top_k_values` (default ``1``, the audit's ``k`` and ``max_top_k``), capped at
the largest ``top_k`` the service accepts (found before the rounds: ``max_top_k`` first, then halving
while the service rejects the request).

**Detection power.** If a leak happens on one request in ``N``, independently, and a request on which
it happens shows it, the chance that ``n`` answered requests see it at least once is::

    p(N) = 1 - (1 - 1/N) ** n,       and p = 0.95 is reached for   N95 = 1 / (1 - 0.05 ** (1 / n))

(:func:`detection_power`, :func:`one_in_for_power`). A leak that needs more than ``n`` calls to
warm up, or that a request can hit without returning a foreign chunk, can still be missed.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ragaudit.security.hostile_tenants import HostileCaller, hostile_callers
from ragaudit.security.probes import Probe
from ragaudit.security.request_mutations import MutatedRequest

DEFAULT_MAX_TOP_K = 100
DEFAULT_CONCURRENCY_LEVELS = (1, 32)
DEFAULT_BUDGET = 3000
POWER_ONE_IN = 1000
"""The ``N`` of the detection power the report states ("a leak on 1 request in 1,000")."""
POWER_TARGET = 0.95
PLAIN_WORDS = 16
_PLAIN_DROP = re.compile(r"[^\w\s]|_", re.UNICODE)

Part = Literal["owner", "cross-tenant", "generic", "hostile", "discovery", "mutation"]


@dataclass(frozen=True)
class AuditRequest:
    """One request of the plan: who asks which probe with which ``top_k``, in which round."""

    probe: Probe
    caller: str | None
    top_k: int
    round: int
    part: Part
    hostile: HostileCaller | None = None
    mutated: MutatedRequest | None = None
    """The request mutation it carries (part ``mutation``): its query text and extra fields."""

    @property
    def key(self) -> str:
        """A stable id for the request (retry schedules are seeded with it)."""
        what = f"@m:{self.mutated.mutation.name}" if self.mutated is not None else ""
        return f"{self.probe.id}@{self.caller!r}@k{self.top_k}@r{self.round}{what}"

    @property
    def query(self) -> str:
        """The query text sent: the mutation's, else the probe's."""
        return self.mutated.text if self.mutated is not None else self.probe.text

    def to_json(self) -> dict[str, Any]:
        return {
            "probe_id": self.probe.id,
            "caller": self.caller,
            "top_k": self.top_k,
            "round": self.round,
            "part": self.part,
            **({"mutation": self.mutated.mutation.name} if self.mutated is not None else {}),
        }


def top_k_values(audit_k: int, max_top_k: int, given: Sequence[int] | None = None) -> tuple[int, ...]:
    """The ``top_k`` values to ask: ``given``, else ``1``, ``audit_k`` and ``max_top_k``; sorted, unique."""
    wanted = list(given) if given else [1, audit_k, max_top_k]
    if any(k < 1 for k in wanted):
        raise ValueError(f"top_k values must be positive integers (got {wanted})")
    return tuple(sorted(set(wanted)))


def discovery_ladder(max_top_k: int, floor: int) -> list[int]:
    """``max_top_k``, then halved while above ``floor``: the ``top_k`` values tried to find the service's max."""
    ladder: list[int] = []
    k = max_top_k
    while k > floor:
        ladder.append(k)
        k //= 2
    return ladder


def plan_matrix(
    probes: Sequence[Probe], tenants: Sequence[str], callers_per_probe: int | None = None
) -> list[tuple[Probe, str]]:
    """Every ``(probe, caller)`` pair where the caller is not the probe's tenant: each tenant probe as
    every other tenant (with ``callers_per_probe = N``, as N of them, rotating from a different start
    for each tenant, so every pair is still asked when ``N × probes per tenant >= tenants - 1``), each
    generic probe as every tenant."""
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


def plan_round(
    probes: Sequence[Probe],
    tenants: Sequence[str],
    top_ks: Sequence[int],
    audit_k: int,
    round_no: int,
    *,
    callers_per_probe: int | None = None,
    hostile_probes: int = 2,
) -> list[AuditRequest]:
    """Every request of one round, in the order they leave (see the module docstring)."""
    plan: list[AuditRequest] = []
    matrix = plan_matrix(probes, tenants, callers_per_probe)
    for k in top_ks:
        owner_asked: set[str] = set()
        for probe, caller in matrix:
            if probe.tenant_id is None:
                plan.append(AuditRequest(probe, caller, k, round_no, "generic"))
                continue
            if probe.id not in owner_asked:  # the owner asks first
                owner_asked.add(probe.id)
                plan.append(AuditRequest(probe, probe.tenant_id, k, round_no, "owner"))
            plan.append(AuditRequest(probe, caller, k, round_no, "cross-tenant"))
        for probe in probes:  # a probe no other tenant asks (one tenant only) is still asked by its owner
            if probe.tenant_id is not None and probe.id not in owner_asked:
                plan.append(AuditRequest(probe, probe.tenant_id, k, round_no, "owner"))
    plan += plan_hostile_round(probes, tenants, audit_k, round_no, hostile_probes)
    return plan


def plan_hostile_round(
    probes: Sequence[Probe], tenants: Sequence[str], top_k: int, round_no: int, per_tenant: int
) -> list[AuditRequest]:
    """The hostile-caller requests of one round: each caller asks the first ``per_tenant`` probes of every
    tenant it names (every tenant, for the fixed ids)."""
    if per_tenant <= 0:
        return []
    first = {t: [p for p in probes if p.tenant_id == t][:per_tenant] for t in tenants}
    plan: list[AuditRequest] = []
    for hostile in hostile_callers(tenants):
        for tenant in hostile.names or sorted(tenants):
            plan += [
                AuditRequest(probe, hostile.caller, top_k, round_no, "hostile", hostile)
                for probe in first.get(tenant, [])
            ]
    return plan


def rounds_for(round_size: int, budget: int, levels: int, rounds: int | None) -> int:
    """``rounds`` when given, else ``max(levels, ceil(budget / round_size))`` (at least 1)."""
    if rounds is not None:
        return max(1, rounds)
    return max(1, levels, math.ceil(budget / round_size) if round_size else 1)


def detection_power(requests: int, one_in: float) -> float:
    """``1 - (1 - 1/N) ** n``: the chance ``n`` requests see a leak that happens on 1 request in ``N``."""
    if requests <= 0 or one_in < 1:
        return 0.0 if requests <= 0 else 1.0
    return 1.0 - math.exp(requests * math.log1p(-1.0 / one_in)) if one_in > 1 else 1.0


def one_in_for_power(requests: int, power: float = POWER_TARGET) -> float:
    """``N = 1 / (1 - (1 - p) ** (1/n))``: the rarest leak (1 in ``N``) seen with probability ``power``."""
    if requests <= 0:
        return 0.0
    return 1.0 / -math.expm1(math.log1p(-power) / requests)


def power_summary(requests: int, one_in: int = POWER_ONE_IN, power: float = POWER_TARGET) -> dict[str, Any]:
    """The detection power of ``requests`` answered requests, for the report (see the module docstring)."""
    p = detection_power(requests, one_in)
    n95 = one_in_for_power(requests, power)
    return {
        "answered_requests": requests,
        "one_in": one_in,
        "probability": round(p, 4),
        "one_in_at_power": math.floor(n95),
        "power": power,
        "statement": (
            f"a leak on 1 request in {one_in:,} would be seen with probability {p:.3f}; "
            f"with probability {power:.2f} for a leak on 1 request in {math.floor(n95):,} "
            f"({requests:,} answered requests)"
            if requests
            else "none: no request was answered, so no leak could have been seen"
        ),
    }


def plain_form(text: str) -> str:
    """The simplified text a rejected probe is asked again with: accents and punctuation dropped (NFKD,
    ASCII letters and digits kept), whitespace collapsed, at most :data:`PLAIN_WORDS` words."""
    folded = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    words = _PLAIN_DROP.sub(" ", folded).split()
    return " ".join(words[:PLAIN_WORDS])
