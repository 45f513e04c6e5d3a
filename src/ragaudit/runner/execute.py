"""Run a :class:`~ragaudit.retrieval.protocol.Retriever` over golden cases, concurrently and bounded.

Every case comes back: with its ranking, or with the error that stopped it (an exception, a timeout,
a malformed result). Nothing is dropped.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import Any

from ragaudit.data.run import CaseRun, RankedItem, Run, drop_duplicates
from ragaudit.data.schema import GoldenCase
from ragaudit.retrieval.protocol import Retriever


def _field(raw: Any, key: str) -> Any:
    return raw.get(key) if isinstance(raw, dict) else getattr(raw, key, None)


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
            )
        )
    return items


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def run_cases(
    retriever: Retriever,
    cases: Sequence[GoldenCase],
    top_k: int,
    *,
    default_tenant: str | None = None,
    concurrency: int = 8,
    timeout_s: float | None = 30.0,
    name: str = "retriever",
    on_done: Callable[[str, CaseRun], None] | None = None,
) -> Run:
    """Query ``retriever`` for each case (the case's tenant, else ``default_tenant``), at most
    ``concurrency`` at a time; return a :class:`Run` holding every case."""
    if top_k <= 0:
        raise ValueError(f"top_k must be a positive integer (got {top_k})")
    if concurrency <= 0:
        raise ValueError(f"concurrency must be a positive integer (got {concurrency})")
    gate = asyncio.Semaphore(concurrency)
    results: dict[str, CaseRun] = {}

    async def one(case: GoldenCase) -> None:
        tenant = case.tenant_id or default_tenant
        async with gate:
            started = time.perf_counter()
            if not tenant:
                outcome = CaseRun([], "no tenant: the case has no tenant_id and no default tenant was given")
            else:
                try:
                    raw = await asyncio.wait_for(
                        retriever.search(tenant_id=tenant, query=case.query, top_k=top_k), timeout_s
                    )
                    kept, dropped = drop_duplicates(to_ranked_items(raw))
                    outcome = CaseRun(kept, None, (time.perf_counter() - started) * 1000.0, dropped)
                except asyncio.TimeoutError:
                    outcome = CaseRun(
                        [], f"timeout after {timeout_s:g}s", (time.perf_counter() - started) * 1000.0
                    )
                except Exception as exc:  # a failing case is recorded, never lost
                    outcome = CaseRun([], _describe(exc), (time.perf_counter() - started) * 1000.0)
        results[case.id] = outcome
        if on_done is not None:
            on_done(case.id, outcome)

    await asyncio.gather(*(one(c) for c in cases))
    return Run({c.id: results[c.id] for c in cases}, name=name)
