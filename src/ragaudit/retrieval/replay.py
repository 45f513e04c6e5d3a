"""Replay a stored run (TREC or JSONL run file) through the retriever protocol.

So precomputed results go through the same runner (and the same tenant checks) as live systems.
A query is matched to its case by query text (and tenant, when cases carry one); the case's stored
ranking comes back, cut to ``top_k``. A case stored with an error replays that error; a query that
matches no case, or several cases with different ids, fails that case with a message saying why.
Replayed latencies are the replayer's own (near zero), not the original system's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, cast

from ragaudit.data.run import CaseRun, Run
from ragaudit.data.schema import GoldenCase
from ragaudit.errors import PermanentRetrievalError
from ragaudit.retrieval.protocol import RetrievedChunk


class RunReplayRetriever:
    """A :class:`~ragaudit.retrieval.protocol.Retriever` answering from ``run``.

    ``case_queries`` maps case id to query text, or is the golden cases themselves (then a case's
    tenant also takes part in matching, which tells apart equal queries of different tenants).
    """

    def __init__(self, run: Run, case_queries: Mapping[str, str] | Iterable[GoldenCase]) -> None:
        self.run = run
        pairs = (
            [(case_id, query, None) for case_id, query in case_queries.items()]
            if isinstance(case_queries, Mapping)
            else [(case.id, case.query, case.tenant_id) for case in case_queries]
        )
        self._by_query: dict[str, list[str]] = {}
        self._by_tenant_query: dict[tuple[str, str], list[str]] = {}
        for case_id, query, tenant in pairs:
            self._by_query.setdefault(query, []).append(case_id)
            if tenant is not None:
                self._by_tenant_query.setdefault((tenant, query), []).append(case_id)

    def __repr__(self) -> str:
        return f"RunReplayRetriever(run={self.run.name!r}, cases={len(self.run.cases)})"

    def case_for(self, tenant_id: str, query: str) -> str:
        """The id of the case asking ``query`` for ``tenant_id``; raise when none or several match."""
        ids = self._by_tenant_query.get((tenant_id, query)) or self._by_query.get(query) or []
        distinct = sorted(set(ids))
        if not distinct:
            raise PermanentRetrievalError(
                f"no case with this query in the replay index (tenant {tenant_id!r})"
            )
        if len(distinct) > 1:
            raise PermanentRetrievalError(
                f"query matches several cases ({', '.join(distinct[:5])}); give them distinct queries or tenants"
            )
        return distinct[0]

    def stored(self, tenant_id: str, query: str) -> CaseRun:
        case_id = self.case_for(tenant_id, query)
        case_run = self.run.cases.get(case_id)
        if case_run is None:
            raise PermanentRetrievalError(f"case {case_id!r} is not in run {self.run.name!r}")
        if case_run.error is not None:
            raise PermanentRetrievalError(case_run.error)
        return case_run

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        chunks: list[RetrievedChunk] = []
        for item in self.stored(tenant_id, query).items[:top_k]:
            chunk: dict[str, Any] = {"chunk_id": item.chunk_id}
            for key in ("score", "content", "source_id", "tenant_id", "metadata"):
                value = getattr(item, key)
                if value is not None:
                    chunk[key] = value
            chunks.append(cast(RetrievedChunk, chunk))
        return chunks
