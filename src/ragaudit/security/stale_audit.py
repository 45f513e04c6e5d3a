"""Stale-version audit: how often superseded document versions reach the top k.

A document is superseded when its corpus metadata says ``status: "superseded"``; a returned chunk
is mapped to its document through the ownership index (id first, content when the id is unknown).
Over the cases that got a ranking (failed cases are counted apart, not scored), with ``S_q`` the
superseded items among the first ``k`` of case ``q`` and ``n_q = min(k, len(ranking))``:

    stale_share@k        = mean_q |S_q| / n_q        (0 for an empty ranking)
    stale_rate@k         = mean_q [ |S_q| > 0 ]
    stale_above_active@k = mean_q [ some superseded item in the top k is ranked above every chunk of
                                    the active version of its source, or that version is not there ]

The active version of a superseded document is ``metadata.superseded_by`` when it names a document,
else the active document of the same tenant with the same ``source_id``. Every offending case is
listed with its stale items: rank, document, source, the active version and where it ranked.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragaudit.corpus.model import Document
from ragaudit.data.run import CaseRun, Run
from ragaudit.data.schema import GoldenCase
from ragaudit.security.ownership import OwnershipIndex


@dataclass(frozen=True)
class StaleItem:
    """A superseded version in a case's top k."""

    rank: int
    chunk_id: str
    doc_id: str
    source_id: str
    active_doc_id: str | None
    active_rank: int | None
    """1-based rank of the active version's best chunk in the ranking as retrieved; ``None``: not there."""

    @property
    def above_active(self) -> bool:
        return self.active_rank is None or self.rank < self.active_rank

    def to_json(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "chunk_id": self.chunk_id,
            "doc_id": self.doc_id,
            "source_id": self.source_id,
            "active_doc_id": self.active_doc_id,
            "active_rank": self.active_rank,
            "above_active": self.above_active,
        }


@dataclass(frozen=True)
class StaleCase:
    case_id: str
    query: str
    tenant_id: str | None
    returned: int
    """Items in the top k."""
    stale: tuple[StaleItem, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "query": self.query,
            "tenant_id": self.tenant_id,
            "returned": self.returned,
            "stale": [s.to_json() for s in self.stale],
        }


NOTHING_SUPERSEDED = (
    'the corpus marks no document superseded (metadata.status = "superseded"): no stale version can be '
    "served, so its zeros check nothing; mark the superseded versions, or audit the corpus that has them"
)


@dataclass(frozen=True)
class StaleAudit:
    """The stale-version figures of one run at ``k``, and the offending cases."""

    name: str
    k: int
    scored: int
    failed: int
    superseded_in_corpus: int
    share: float
    rate: float
    above_active: float
    offending: tuple[StaleCase, ...]

    @property
    def not_verified(self) -> str | None:
        """Why the figures check nothing (``None``: they do): with no superseded version in the corpus,
        no stale chunk can be served, so a share of 0 says nothing about how stale versions are ranked."""
        return NOTHING_SUPERSEDED if self.superseded_in_corpus == 0 else None

    def metrics(self) -> dict[str, float]:
        return {
            f"stale_share@{self.k}": self.share,
            f"stale_rate@{self.k}": self.rate,
            f"stale_above_active@{self.k}": self.above_active,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "k": self.k,
            "cases_scored": self.scored,
            "cases_failed": self.failed,
            "superseded_documents_in_corpus": self.superseded_in_corpus,
            "not_verified": self.not_verified,
            "metrics": self.metrics(),
            "offending_cases": [c.to_json() for c in self.offending],
        }


def active_versions(documents: Mapping[str, Document]) -> dict[str, str | None]:
    """For every superseded document, the id of the active document replacing it (``None``: none).

    ``metadata.superseded_by`` when it names a document, else the active document of the same tenant
    with the same ``source_id``.
    """
    active_by_source = {
        (d.tenant_id, d.source_id): d.doc_id for d in documents.values() if d.status != "superseded"
    }
    out: dict[str, str | None] = {}
    for doc in documents.values():
        if doc.status == "superseded":
            named = doc.metadata.get("superseded_by")
            out[doc.doc_id] = (
                named
                if isinstance(named, str) and named in documents
                else active_by_source.get((doc.tenant_id, doc.source_id))
            )
    return out


def _stale_items(
    case: CaseRun, k: int, ownership: OwnershipIndex, actives: Mapping[str, str | None]
) -> tuple[StaleItem, ...]:
    docs: list[Document | None] = []
    for item in case.items:
        who = ownership.attribute(item.chunk_id, item.content)
        docs.append(ownership.documents.get(who.doc_id) if who.doc_id is not None else None)
    first_rank: dict[str, int] = {}
    for rank, doc in enumerate(docs, start=1):
        if doc is not None:
            first_rank.setdefault(doc.doc_id, rank)
    found: list[StaleItem] = []
    for rank, (item, doc) in enumerate(zip(case.items[:k], docs[:k], strict=False), start=1):
        if doc is None or doc.status != "superseded":
            continue
        active = actives.get(doc.doc_id)
        found.append(
            StaleItem(
                rank,
                item.chunk_id,
                doc.doc_id,
                doc.source_id,
                active,
                first_rank.get(active) if active is not None else None,
            )
        )
    return tuple(found)


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def audit_stale(
    run: Run, cases: Sequence[GoldenCase], ownership: OwnershipIndex, k: int = 5, name: str | None = None
) -> StaleAudit:
    """Stale-version figures of ``run`` over ``cases`` at ``k`` (see the module docstring)."""
    if k < 1:
        raise ValueError(f"k must be a positive integer (got {k})")
    actives = active_versions(ownership.documents)
    shares: list[float] = []
    offending: list[StaleCase] = []
    failed = 0
    for case in cases:
        outcome = run.cases.get(case.id)
        if outcome is None or outcome.error is not None:
            failed += 1
            continue
        stale = _stale_items(outcome, k, ownership, actives)
        returned = min(k, len(outcome.items))
        shares.append(len(stale) / returned if returned else 0.0)
        if stale:
            offending.append(StaleCase(case.id, case.query, case.tenant_id, returned, stale))
    scored = len(shares)
    above = sum(1 for c in offending if any(s.above_active for s in c.stale))
    return StaleAudit(
        name or run.name,
        k,
        scored,
        failed,
        len(actives),
        _mean(shares),
        len(offending) / scored if scored else 0.0,
        above / scored if scored else 0.0,
        tuple(offending),
    )
