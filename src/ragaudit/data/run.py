"""What a system returned for each case: rankings, scores, errors and latencies.

A :class:`Run` is what every retriever produces (live pipelines, HTTP services, run files) and what
the evaluator scores. The order of ``items`` is the ranking.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragaudit.verdict import CheckVerdict

MISSING = "missing: the run has no result for this case"
"""The failure reason of a dataset case a run has no result for (counted as a failed case)."""


@dataclass(frozen=True, slots=True)
class RankedItem:
    """One retrieved item. ``tenant_id`` and ``content`` are filled by live retrievers when known.

    ``extra`` holds every other field the retriever returned (``title``, ``snippet``, ``highlight``,
    ...), as returned: the tenant checks attribute them too (a leak can hide in any field)."""

    chunk_id: str
    score: float | None = None
    tenant_id: str | None = None
    content: str | None = None
    source_id: str | None = None
    metadata: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"chunk_id": self.chunk_id}
        for key in ("score", "tenant_id", "source_id"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out


@dataclass(frozen=True, slots=True)
class LeakRecord:
    """A returned chunk that the caller's tenant must not see.

    ``claimed_tenant`` is the owner the retriever reported for the chunk; ``None`` means the chunk
    carried no tenant label (a leak only when the run requires labels: unlabelled data cannot be
    shown to belong to the caller). ``rank`` is the chunk's 1-based position in the returned list;
    0 for a leak in the response's other values (a ``debug`` or ``facets`` field), whose ``chunk_id``
    is then that value's JSON path (``$.debug.nearest[0].doc_id``).
    """

    chunk_id: str
    rank: int
    claimed_tenant: str | None
    caller_tenant: str

    def to_json(self) -> dict[str, Any]:
        return {
            "chunk_id": self.chunk_id,
            "rank": self.rank,
            "claimed_tenant": self.claimed_tenant,
            "caller_tenant": self.caller_tenant,
        }


@dataclass(slots=True)
class CaseRun:
    """The outcome of one case: a ranking, or an error saying why there is none.

    Live runs also record the tenant the case was asked for, how many attempts it took (retries of
    transient failures included; 0 when it was never sent) and any tenant leaks found in the ranking.
    """

    items: list[RankedItem] = field(default_factory=list)
    error: str | None = None
    latency_ms: float | None = None
    duplicates: int = 0
    attempts: int = 1
    leaks: list[LeakRecord] = field(default_factory=list)
    tenant_id: str | None = None

    @property
    def ranking(self) -> list[str]:
        return [item.chunk_id for item in self.items]


@dataclass
class Run:
    """Results for a set of cases, keyed by case id."""

    cases: dict[str, CaseRun]
    name: str = "run"
    source: str | None = None
    sha256: str | None = None
    problems: list[str] = field(default_factory=list)
    """Non-fatal oddities met while reading (duplicate lines, ...), reported with the evaluation."""
    isolation: CheckVerdict | None = None
    """The tenant-isolation verdict over the run (:func:`ragaudit.runner.tenancy.assess_run`)."""
    latency_basis: str | None = None
    """How each case's ``latency_ms`` was measured (:func:`ragaudit.runner.execute.latency_basis`; None
    for a run read from a file)."""

    def info(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "sha256": self.sha256, "cases": len(self.cases)}


def order_trec(items: list[RankedItem]) -> list[RankedItem]:
    """trec_eval's order: score descending, then chunk id descending (the rank column is ignored)."""
    return sorted(
        items, key=lambda it: (it.score if it.score is not None else float("-inf"), it.chunk_id), reverse=True
    )


def count_duplicates(items: list[RankedItem]) -> int:
    """How many items repeat an id seen earlier in the ranking.

    The items themselves are kept: under the policy a later copy keeps its slot and gains nothing.
    """
    return len(items) - len({item.chunk_id for item in items})


def _field(raw: Any, key: str) -> Any:
    return raw.get(key) if isinstance(raw, dict) else getattr(raw, key, None)


ITEM_FIELDS = frozenset({"chunk_id", "score", "tenant_id", "content", "source_id", "metadata", "extra"})
"""The fields :class:`RankedItem` reads by name; any other field a retriever returns goes to ``extra``."""


def _extra(raw: Any) -> dict[str, Any] | None:
    """The fields of ``raw`` beyond :data:`ITEM_FIELDS` (and those under its own ``extra`` object)."""
    if type(raw) is dict:  # the common case (a plain dict is never a dataclass instance)
        fields: Any = raw
    elif dataclasses.is_dataclass(raw) and not isinstance(raw, type):
        fields = {f.name: getattr(raw, f.name, None) for f in dataclasses.fields(raw)}
    else:
        fields = raw if isinstance(raw, dict) else getattr(raw, "__dict__", None)
    if not isinstance(fields, dict):
        return None
    given = fields.get("extra")
    out = dict(given) if isinstance(given, dict) else {}
    if not fields.keys() <= ITEM_FIELDS:  # else nothing beyond the protocol's fields to add
        out.update(
            (str(k), v) for k, v in fields.items() if k not in ITEM_FIELDS and not str(k).startswith("_")
        )
    return out or None


def to_ranked_items(results: Any) -> list[RankedItem]:
    """Normalise what a retriever returned (dicts or objects) into :class:`RankedItem` s; raise on garbage."""
    if not isinstance(results, list):
        raise TypeError(f"retriever returned {type(results).__name__}, expected a list of chunks")
    items: list[RankedItem] = []
    for position, raw in enumerate(results, start=1):
        chunk_id = _field(raw, "chunk_id")
        if not isinstance(chunk_id, str) or not chunk_id:
            raise TypeError(f"result #{position} has no 'chunk_id' string")
        score = _field(raw, "score")
        tenant = _field(raw, "tenant_id")
        content = _field(raw, "content")
        source = _field(raw, "source_id")
        metadata = _field(raw, "metadata")
        items.append(
            RankedItem(
                chunk_id,
                float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None,
                tenant if isinstance(tenant, str) else None,
                content if isinstance(content, str) else None,
                source if isinstance(source, str) else None,
                metadata if isinstance(metadata, dict) else None,
                _extra(raw),
            )
        )
    return items
