"""Deliberately leaky services whose leak hides *inside* what looks like the caller's own result, each
with an honest twin that the audit once called leaking or unverifiable.

**Never use these to serve anything.** Each is the honest tenant-partitioned BM25 of
:mod:`ragaudit.security.leaky_base` except in how it dresses its hits; the leaky one builds the dressing
from the unfiltered ranking of one index over every tenant (or from every tenant's chunks), its twin
from the caller's own:

| style | the leaky service | its honest twin |
|---|---|---|
| ``query-echo`` | each hit's ``explanation`` and the ``did_you_mean`` beside the results quote the unfiltered top hit | the same fields echo the query (a spelling suggestion changes one word) |
| ``neighbour-window`` | each hit's text is widened with the next chunk in ingestion order, which interleaves tenants | the next chunk of the caller's own |
| ``merged-context`` | one context block merging the unfiltered top 3 hits | merging the caller's own top 3 |
| ``composite-id`` | the unfiltered ranking, other tenants' hits with their text withheld under ids ``<doc_id>:c0`` | the caller's own hits with their text withheld under the same id form |
| ``source-url`` | ``metadata.source_url`` links to the document of the same rank in the unfiltered ranking | links to the hit's own document |

:data:`CONTEXT_STYLES` lists them; :func:`make_context_service` builds one (``honest=True``: the twin).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ragaudit.corpus.model import Chunk
from ragaudit.retrieval.protocol import RetrievedChunk, RetrievedList
from ragaudit.security.leaky_base import Partitioned

CONTEXT_STYLES = ("query-echo", "neighbour-window", "merged-context", "composite-id", "source-url")
_WINDOW_WORDS = 30


def _doc(hit: RetrievedChunk) -> str:
    return hit["chunk_id"].rsplit("#", 1)[0]


class ContextService(Partitioned):
    """Tenant-partitioned BM25 whose hits are dressed by :meth:`dress` (``honest`` chooses the twin)."""

    def __init__(self, chunks: Sequence[Chunk], style: str, honest: bool = False) -> None:
        super().__init__(chunks)
        if style not in CONTEXT_STYLES:
            raise ValueError(f"unknown context style {style!r}; one of {', '.join(CONTEXT_STYLES)}")
        self.style = style
        self.honest = honest
        self.text = {c.chunk_id: c.text for c in chunks}
        rows: dict[str, list[str]] = {}
        for chunk in chunks:
            rows.setdefault(chunk.tenant_id, []).append(chunk.chunk_id)
        longest = max(map(len, rows.values()), default=0)
        self.ingested = [row[i] for i in range(longest) for row in rows.values() if i < len(row)]
        """Every chunk in ingestion order: the tenants' uploads interleave."""
        self.own_order = rows

    def source(self, tenant: str, query: str, k: int) -> list[RetrievedChunk]:
        """Where the dressing comes from: the caller's ranking (twin) or the unfiltered one (leak)."""
        return self.own(tenant, query, k) if self.honest else self.shared.search(query, k)

    def neighbour(self, tenant: str, chunk_id: str) -> str:
        order = self.own_order[tenant] if self.honest else self.ingested
        return order[(order.index(chunk_id) + 1) % len(order)]

    def answer(self, tenant_id: str, query: str, top_k: int) -> Any:
        hits = self.own(tenant_id, query, top_k)
        if self.style == "query-echo":
            top = self.source(tenant_id, query, 1)
            quoted = query if self.honest or not top else " ".join(top[0].get("content", "").split()[:12])
            explained: list[Any] = [{**h, "explanation": f"matched '{quoted}' in body"} for h in hits]
            suggestion = query.replace("e", "ee", 1) if self.honest else quoted
            return RetrievedList(explained, {"results": explained, "did_you_mean": suggestion}, "$.results")
        if self.style == "neighbour-window":
            widened = []
            for h in hits:
                extra = " ".join(self.text[self.neighbour(tenant_id, h["chunk_id"])].split()[:_WINDOW_WORDS])
                widened.append({**h, "content": f"{h.get('content', '')}\n\n{extra}"})
            return widened
        if self.style == "merged-context":
            block = self.source(tenant_id, query, 3)
            if not block:
                return []
            merged = "\n\n".join(h.get("content", "") for h in block)
            return [
                {
                    "chunk_id": f"context-{len(merged)}",
                    "score": 1.0,
                    "content": merged,
                    "tenant_id": tenant_id,
                }
            ]
        if self.style == "composite-id":
            ranked = self.source(tenant_id, query, top_k)
            return [
                {"chunk_id": f"{_doc(h)}:c0", "score": h.get("score", 0.0), "content": "", "restricted": True}
                for h in ranked
            ]
        linked = self.source(tenant_id, query, len(hits)) if hits else []
        return [
            {**h, "metadata": {"source_url": f"https://kb.example.com/docs/{_doc(g)}?ref=search"}}
            for h, g in zip(hits, linked, strict=False)
        ]


def make_context_service(style: str, chunks: Sequence[Chunk], *, honest: bool = False) -> ContextService:
    """The leaky service of ``style`` over ``chunks`` (its honest twin with ``honest=True``)."""
    return ContextService(chunks, style, honest)
