"""Deliberately leaky services whose leak is *beside* the result list, each with an honest twin.

**Never use these to serve anything.** Like :mod:`ragaudit.security.leaky` (which lists the leaky ones
in :data:`~ragaudit.security.leaky.LEAKY` as ``response-<style>``), each is built from real bm25s
indexes: its results are the honest tenant-partitioned BM25 ranking, the caller's own chunks under
their own ids and labels. The bug is in the rest of the response, built from the *unfiltered*
ranking of one index over every tenant (a debug panel, a suggester, a facet or aggregation query, a
"related documents" widget that forgot the tenant filter). The **honest twin** (``honest=True``)
returns the same shape built from the caller's own ranking, and must audit clean.

Styles (:data:`RESPONSE_STYLES`):

- ``debug``: ``$.debug.candidates[i].snippet``: the first words of each candidate (and the query echoed);
- ``suggest``: ``$.suggest[i]``: document titles;
- ``facets``: ``$.facets.customer[i]``: names (capitalised word runs) aggregated over the hits, and
  the same names as the keys of ``$.facets.customer_counts``;
- ``aggregations``: ``$.aggregations.title.buckets[i].key`` and ``$.aggregations.source.buckets[i].key``:
  titles and source ids with counts;
- ``related``: ``$.related[i]``: document ids under a key that does not say "id";
- ``see-also``: ``$.results[i].metadata.see_also[j]``: document ids beside each result, text withheld;
- ``base64``: ``$.cursor``: a pagination token, base64 of JSON holding snippets;
- ``url``: ``$.links.next``: a link whose query string carries a percent-encoded snippet;
- ``html``: ``$.results[i].preview_html``: a snippet written as HTML character references;
- ``json-string``: ``$.explain``: JSON serialised into a string, holding titles and snippets.

:meth:`ResponseLeakRetriever.body` is the whole response as an HTTP service would send it (``results``
plus the extra fields; tests serve it on 127.0.0.1); :meth:`~ResponseLeakRetriever.search`, the Python
call, returns the results as a list subclass carrying the extra fields as attributes (the ``see-also``
results as dataclass objects), as a Python client library would.
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from ragaudit.corpus.model import Chunk
from ragaudit.retrieval.protocol import RetrievedChunk
from ragaudit.security.leaky_base import Partitioned as _Partitioned

RESPONSE_STYLES = (
    "debug",
    "suggest",
    "facets",
    "aggregations",
    "related",
    "see-also",
    "base64",
    "url",
    "html",
    "json-string",
)
_NAME = re.compile(r"\b[A-Z][A-Za-z0-9&'-]+(?:\s+[A-Z][A-Za-z0-9&'-]+)+")
_EXTRAS_FROM_K = 5
"""The extra fields are built from at least this many hits (a facet panel looks wider than the page)."""


class ResponseList(list[Any]):
    """A Python client library's result: the hits, with the rest of the response as attributes."""


@dataclass
class Hit:
    """A result as an object (a Python client's hit class), with a field the protocol does not name."""

    chunk_id: str
    score: float
    content: str
    source_id: str
    tenant_id: str
    metadata: dict[str, Any] = field(default_factory=dict)
    see_also: list[str] = field(default_factory=list)


def _doc_id(hit: RetrievedChunk) -> str:
    doc = (hit.get("metadata") or {}).get("doc_id")
    return doc if isinstance(doc, str) else hit["chunk_id"]


def _title(hit: RetrievedChunk) -> str:
    title = (hit.get("metadata") or {}).get("title")
    return title if isinstance(title, str) else ""


def _snippet(hit: RetrievedChunk, words: int = 25) -> str:
    return " ".join(hit.get("content", "").split()[:words])


def _names(hits: Sequence[RetrievedChunk]) -> list[str]:
    """Runs of capitalised words in the hits' text (what an entity facet shows), first seen first."""
    found = (m.group() for h in hits for m in _NAME.finditer(h.get("content", "")))
    return list(dict.fromkeys(found))[:12]


def _buckets(values: Sequence[str]) -> list[dict[str, Any]]:
    counts: dict[str, int] = {}
    for value in values:
        if value:
            counts[value] = counts.get(value, 0) + 1
    return [{"key": k, "doc_count": n} for k, n in counts.items()]


def _top_level(style: str, hits: Sequence[RetrievedChunk], query: str) -> dict[str, Any]:
    """The fields beside ``results`` for a top-level style, built from ``hits``."""
    if style == "debug":
        candidates = [{"rank": i, "score": round(float(h.get("score", 0.0)), 4), "snippet": _snippet(h)}
                      for i, h in enumerate(hits, start=1)]  # fmt: skip
        return {"debug": {"engine": "bm25", "query": query, "candidates": candidates}}
    if style == "suggest":
        return {"suggest": list(dict.fromkeys(t for t in map(_title, hits) if t)), "did_you_mean": query}
    if style == "facets":
        names = _names(hits)
        counts = {name: sum(name in h.get("content", "") for h in hits) for name in names}
        return {"facets": {"customer": names, "customer_counts": counts, "language": ["en"]}}
    if style == "aggregations":
        sources = [h.get("source_id", "") for h in hits]
        return {
            "aggregations": {
                "title": {"buckets": _buckets([_title(h) for h in hits])},
                "source": {"buckets": _buckets(sources)},
            }
        }
    if style == "related":
        return {"related": list(dict.fromkeys(_doc_id(h) for h in hits))}
    if style == "base64":
        token = json.dumps({"page": 2, "seen": [{"snippet": _snippet(h, 20)} for h in hits]})
        return {"cursor": base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")}
    if style == "url":
        preview = _snippet(hits[0], 30) if hits else ""
        return {"links": {"next": f"/search?page=2&q={quote(query)}&preview={quote(preview)}"}}
    if style == "json-string":
        explain = {"hits": [{"title": _title(h), "text": _snippet(h)} for h in hits]}
        return {"explain": json.dumps(explain)}
    return {}


def _entities(text: str) -> str:
    return "".join(f"&#{ord(ch)};" for ch in text)


class ResponseLeakRetriever(_Partitioned):
    """The caller's own results, and the rest of the response built from the unfiltered ranking
    (``honest=True``: from the caller's own ranking). ``style``: one of :data:`RESPONSE_STYLES`."""

    def __init__(self, chunks: Sequence[Chunk], style: str = "facets", honest: bool = False) -> None:
        if style not in RESPONSE_STYLES:
            raise ValueError(f"unknown style {style!r}; one of: {', '.join(RESPONSE_STYLES)}")
        super().__init__(chunks)
        self.style = style
        self.honest = honest

    def _sources(self, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        k = max(top_k, _EXTRAS_FROM_K)
        if self.honest:
            return self.own(tenant_id, query, k)
        return self.shared.search(query, k)  # the bug: the extras query forgot the tenant filter

    def body(self, tenant_id: str, query: str, top_k: int) -> dict[str, Any]:
        """The whole response, JSON-ready: ``results`` (the caller's own chunks) and the extra fields."""
        results: list[dict[str, Any]] = json.loads(json.dumps(self.own(tenant_id, query, top_k), default=str))
        sources = self._sources(tenant_id, query, top_k)
        if self.style == "see-also":
            ids = list(dict.fromkeys(_doc_id(h) for h in sources))[:5]
            for result in results:
                result["metadata"]["see_also"] = [i for i in ids if i != result["metadata"].get("doc_id")]
        if self.style == "html":
            for result, source in zip(results, sources, strict=False):
                result["preview_html"] = _entities(_snippet(source, 30))
        return {
            "results": results,
            "total": len(results),
            "took_ms": 3,
            **_top_level(self.style, sources, query),
        }

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        body = self.body(tenant_id, query, top_k)
        hits: list[Any] = body.pop("results")
        if self.style == "see-also":
            hits = [Hit(**{k: h[k] for k in ("chunk_id", "score", "content", "source_id", "tenant_id")},
                        metadata={k: v for k, v in h["metadata"].items() if k != "see_also"},
                        see_also=h["metadata"]["see_also"]) for h in hits]  # fmt: skip
        out = ResponseList(hits)
        for name, value in body.items():
            setattr(out, name, value)
        return out


def response_service(style: str, honest: bool = False) -> Callable[[Sequence[Chunk]], ResponseLeakRetriever]:
    """A factory of :class:`ResponseLeakRetriever` in ``style`` (its honest twin with ``honest=True``)."""

    def make(chunks: Sequence[Chunk]) -> ResponseLeakRetriever:
        return ResponseLeakRetriever(chunks, style, honest)

    return make
