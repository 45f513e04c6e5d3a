"""What each request mutation of the tenant audit sent and found: the report's mutation table.

One row per mutation, every axis in one table (``asking.mutations`` in the JSON):

- ``depth``: one row per ``top_k`` value of the rounds (the tenant requests asked at it);
- ``concurrency``: one row per level (the requests of the rounds run at it);
- ``tenant-id``: one row per family of hostile tenant ids (:mod:`ragaudit.security.hostile_tenants`);
- ``query-shape``, ``page-size``, ``pagination``, ``tenant-channel``, ``credential-conflict``: one row per mutation
  (:mod:`ragaudit.security.request_mutations`), including those not applicable to the retriever.

Each row counts the requests sent, answered, ``rejected`` (refused: an HTTP 4xx, a raised error; a
right answer to a hostile or odd request, never a failure of the audit), ``errored`` (the service
answered, but with a server error, a rate limit or a malformed body: nothing could be checked, and it is
not a refusal either), ``failed`` (no answer: no connection or a timeout) and ``leaks`` (foreign chunks
served), and says what leak it looks for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ragaudit.security.error_rate import classify_error
from ragaudit.security.request_loop import UNREACHABLE_KINDS, Answer
from ragaudit.security.request_mutations import Mutation

ERRORED_KINDS = frozenset({"http-5xx", "http-429", "malformed-response"})
"""Answers that are neither results nor a refusal: the request was not checked."""
NO_KEYS = (
    "no key per tenant to send one tenant's key with another's id (give --endpoint-keys keys-client.toml)"
)
NO_JWT_KEYS = (
    "the keys from --endpoint-keys are not JWTs whose claims name their tenant, so there is no token to "
    "forge (a service that takes the tenant from unverified claims is not checked)"
)
ROUND_PARTS = frozenset({"owner", "cross-tenant", "generic"})
TENANT_ID_CATCHES = {
    "fixed": "a missing, empty or wildcard tenant id read as every tenant",
    "near-miss": "case, whitespace or prefix matching of tenant ids",
    "syntax": "lists, roles, wildcards, encodings, JSON arrays or paths read into the tenant id",
    "unicode": "accent folding, Unicode normalisation (NFC/NFKC) or confusable mapping of tenant ids",
    "pattern": "LIKE / regex / glob matching, trimming or C-string truncation of tenant ids",
}


@dataclass
class _Row:
    axis: str
    mutation: str
    catches: str
    requests: int = 0
    answered: int = 0
    rejected: int = 0
    errored: int = 0
    failed: int = 0
    leaks: int = 0
    applicable: bool = True
    reason: str | None = None

    def add(self, answer: Answer, leaks: int) -> None:
        self.requests += 1
        self.leaks += leaks
        kind = classify_error(answer.error) if answer.items is None and answer.error is not None else None
        if answer.items is not None:
            self.answered += 1
        elif kind in UNREACHABLE_KINDS:
            self.failed += 1
        elif kind in ERRORED_KINDS:
            self.errored += 1
        else:
            self.rejected += 1

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "axis": self.axis,
            "mutation": self.mutation,
            "catches": self.catches,
            "applicable": self.applicable,
            "requests": self.requests,
            "answered": self.answered,
            "rejected": self.rejected,
            "errored": self.errored,
            "failed": self.failed,
            "leaks": self.leaks,
        }
        if self.reason is not None:
            out["reason"] = self.reason
        return out


@dataclass
class MutationTally:
    """Counts every answer into its rows (see the module docstring)."""

    rows: dict[tuple[str, str], _Row] = field(default_factory=dict)

    def _row(self, axis: str, name: str, catches: str) -> _Row:
        key = (axis, name)
        if key not in self.rows:
            self.rows[key] = _Row(axis, name, catches)
        return self.rows[key]

    def planned(self, mutations: Sequence[Mutation], not_applicable: Sequence[Mutation], why: str) -> None:
        """Register the mutations in catalogue order (a mutation that sent nothing still gets a row)."""
        skipped = {m.name for m in not_applicable}
        has_keys = any("credential" in m.channels() and m.name not in skipped for m in mutations)
        for mutation in mutations:
            row = self._row(mutation.axis, mutation.name, mutation.catches)
            if mutation.name in skipped:
                row.applicable = False
                channels = ", ".join(sorted(mutation.channels()))
                row.reason = f"needs the {channels} channel: " + _why_not(mutation, why, has_keys)

    def add(self, answer: Answer, leaks: int) -> None:
        request = answer.request
        if request.mutated is not None:
            m = request.mutated.mutation
            self._row(m.axis, m.name, m.catches).add(answer, leaks)
        elif request.hostile is not None:
            family = request.hostile.family
            self._row("tenant-id", family, TENANT_ID_CATCHES.get(family, "")).add(answer, leaks)
        elif request.part in ROUND_PARTS:
            self._row(
                "depth", f"top_k={request.top_k}", "a path for large pages that forgets the tenant"
            ).add(answer, leaks)
            self._row(
                "concurrency",
                f"{answer.concurrency} in flight",
                "races, overflow paths and caches under load",
            ).add(answer, leaks)

    def to_json(self) -> list[dict[str, Any]]:
        order = (
            "depth",
            "concurrency",
            "tenant-id",
            "query-shape",
            "page-size",
            "pagination",
            "tenant-channel",
            "credential-conflict",
        )
        rows = sorted(
            self.rows.values(), key=lambda r: order.index(r.axis) if r.axis in order else len(order)
        )
        return [row.to_json() for row in rows]


def found_lines(rows: Sequence[dict[str, Any]]) -> list[str]:
    """``"offset=10 (body): 412 foreign chunks"`` for each row that found leaks."""
    return [f"{r['mutation']}: {r['leaks']} foreign chunk(s)" for r in rows if r.get("leaks")]


def _why_not(mutation: Mutation, why: str, has_keys: bool = False) -> str:
    """Why ``mutation`` was not sent (see :meth:`MutationTally.planned`)."""
    if "forged-token" in mutation.channels():
        return NO_JWT_KEYS if has_keys else NO_KEYS
    return NO_KEYS if "credential" in mutation.channels() else why
