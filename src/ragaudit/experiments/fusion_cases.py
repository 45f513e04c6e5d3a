"""The first-stage evidence ``ragaudit fit-fusion`` learns from, and how rankings over it are scored.

:func:`collect` runs a ``hybrid`` first stage's two retrievers once per answerable case, each case with
its own tenant (a chunk of another tenant is dropped and counted, never a feature or a label), and keeps
per case the two lists (for convex fusion), the RRF ranking, and the features
(:mod:`ragaudit.retrieval.fusion_features`) and grades of the RRF list's top ``candidates``. A case's
``group`` is its tenant and normalised query text: cases asking the same question share a fold."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from ragaudit.data.schema import Dataset, GoldenCase
from ragaudit.errors import InputError
from ragaudit.metrics.bulk import compute_rankings
from ragaudit.metrics.names import MetricSpec
from ragaudit.metrics.policy import Policy
from ragaudit.retrieval.fusion_features import FEATURES, candidate_features
from ragaudit.retrieval.learned_fusion import dense_encoder, hybrid_components
from ragaudit.retrieval.rerank import candidate
from ragaudit.text.words import normalize_text

FloatArray = npt.NDArray[np.float64]


@dataclass
class CaseData:
    """One answerable case's first-stage evidence."""

    case: GoldenCase
    group: str
    features: FloatArray
    """Features of the RRF list's top ``candidates`` (rows in RRF order)."""
    grades: FloatArray
    """The grade of each of those candidates (0 when unjudged)."""
    rrf: list[str]
    """The RRF ranking, ``depth`` deep."""
    lists: tuple[list[tuple[str, float | None]], list[tuple[str, float | None]]]
    """BM25's and the dense retriever's lists, for convex fusion."""


@dataclass
class Collected:
    cases: list[CaseData]
    components: tuple[int, int]
    absent_rank: int
    foreign_dropped: int


def question_of(case: GoldenCase, default_tenant: str | None) -> tuple[str, str]:
    """The question a case asks: its tenant (``default_tenant`` when it names none) and its normalised
    query text. Cases asking the same question share a fold and are held out together."""
    return (case.tenant_id or default_tenant or "", normalize_text(case.query))


async def collect(
    dataset: Dataset,
    retriever: Any,
    *,
    candidates: int,
    depth: int,
    default_tenant: str | None,
    threshold: int,
) -> Collected:
    """Run the hybrid's sub-retrievers once per answerable case and keep what fusion needs."""
    components, hybrid_depth = hybrid_components(retriever)
    encoder = dense_encoder(retriever)
    absent_rank = hybrid_depth + 1
    want = max(depth, candidates, hybrid_depth)
    dropped = 0
    retrieved: list[tuple[GoldenCase, str, list[Any], tuple[list[Any], list[Any]]]] = []
    for case in dataset.cases:
        if not case.is_answerable(threshold):
            continue
        tenant = case.tenant_id or default_tenant
        if not tenant:
            raise InputError(
                dataset.path, case.line, f"case {case.id!r} has no tenant_id", "pass --tenant NAME"
            )
        raw = await asyncio.gather(
            *(r.search(tenant_id=tenant, query=case.query, top_k=want) for r in retriever.retrievers)
        )
        kept = [[c for c in results if c.get("tenant_id", tenant) == tenant] for results in raw]
        dropped += sum(len(a) - len(b) for a, b in zip(raw, kept, strict=True))
        lists = tuple([(c["chunk_id"], c.get("score")) for c in kept[p]] for p in components)
        retrieved.append((case, tenant, retriever.fuse_results(kept, want), (lists[0], lists[1])))
    # the queries and titles in one batch: the embedding cache then writes once, not once per case
    views = [
        [candidate(c, i) for i, c in enumerate(fused[:candidates], start=1)] for _, _, fused, _ in retrieved
    ]
    encoder.encode(
        sorted(
            {case.query for case, *_ in retrieved}
            | {v.title for row in views for v in row if v.title.strip()}
        )
    )
    out: list[CaseData] = []
    for (case, _tenant, fused, lists), row in zip(retrieved, views, strict=True):
        grades = case.grades()
        out.append(
            CaseData(
                case,
                "\x00".join(question_of(case, default_tenant)),
                candidate_features(case.query, row, components, absent_rank, encoder, FEATURES),
                np.array([float(max(grades.get(c["chunk_id"], 0), 0)) for c in fused[:candidates]]),
                [c["chunk_id"] for c in fused[:depth]],
                lists,
            )
        )
    return Collected(out, components, absent_rank, dropped)


def score_rankings(
    cases: Sequence[CaseData], rankings: Sequence[list[str]], specs: Sequence[MetricSpec], policy: Policy
) -> dict[str, FloatArray]:
    threshold = policy.relevance_threshold
    return compute_rankings(
        rankings,
        [c.case.relevant_set(threshold) for c in cases],
        [c.case.grades() for c in cases],
        specs,
        policy.gain,
    )
