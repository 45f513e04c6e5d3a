"""Deliberately leaky HTTP services whose leak is in *how* the answer travels, each with an honest twin:
a page reached through the service's own cursor or ``next`` link, a response header, the body of a
refusal, a streamed (NDJSON) body, a 200 that carries an error.

**Never use these to serve anything.** Each is the honest tenant-partitioned BM25 of
:mod:`ragaudit.security.leaky_base` on its plain path; :meth:`TransportService.respond` answers one
HTTP request (``(status, body, headers)``; tests serve it on 127.0.0.1):

| style | the leaky service | its honest twin |
|---|---|---|
| ``next-cursor`` | returns ``next_cursor`` (an opaque token); the page asked with ``cursor`` comes from the shared index | pages within the caller's partition |
| ``next-link`` | returns ``links.next`` = ``/search?page_token=...``; that page comes from the shared index | pages within the caller's partition |
| ``debug-header`` | ``X-Debug-Top-Hit`` (an id) and ``X-Debug-Snippet`` (base64 text) name the unfiltered top hit | the caller's own top hit |
| ``error-preview`` | a tenant id that is not exactly a tenant gets 403 with a ``preview`` of the tenant it resembles | 403 with the reason only |
| ``ndjson`` | streams the shared index's hits as NDJSON (``application/x-ndjson``) | streams the caller's own |
| ``partial-error`` | a long query (12+ words) gets 200 ``{"error", "partial": [...]}`` from the shared index | the same shape from the caller's partition |

The ``partial-error`` twin is no ranking either: the audit must call it *incomplete* (its requests
failed), never a leak and never clean.
"""

from __future__ import annotations

import base64
import json
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from ragaudit.corpus.model import Chunk
from ragaudit.retrieval.protocol import RetrievedChunk
from ragaudit.security.leaky_base import Partitioned

TRANSPORT_STYLES = ("next-cursor", "next-link", "debug-header", "error-preview", "ndjson", "partial-error")
Reply = tuple[int, Any, dict[str, str]]
"""``(status, body, headers)``: a body of ``bytes`` is sent as it is, anything else as JSON."""
_PARTIAL_FROM_WORDS = 12


def _public(hits: Sequence[RetrievedChunk]) -> list[dict[str, Any]]:
    return [{k: v for k, v in h.items() if k in ("chunk_id", "score", "content", "tenant_id")} for h in hits]


class TransportService(Partitioned):
    """Tenant-partitioned BM25 answering HTTP requests in one :data:`TRANSPORT_STYLES` style."""

    def __init__(self, chunks: Sequence[Chunk], style: str, honest: bool = False) -> None:
        super().__init__(chunks)
        if style not in TRANSPORT_STYLES:
            raise ValueError(f"unknown transport style {style!r}; one of {', '.join(TRANSPORT_STYLES)}")
        self.style = style
        self.honest = honest
        self.tenants = frozenset(c.tenant_id for c in chunks)
        self.pages: dict[str, tuple[str, str, int, int]] = {}
        """Token -> (tenant, query, top_k, offset) of the page it asks."""

    def later(self, tenant: str, query: str, k: int) -> list[RetrievedChunk]:
        return self.own(tenant, query, k) if self.honest else self.shared.search(query, k)

    def _paged(
        self, tenant: str, query: str, top_k: int, token: str | None
    ) -> tuple[list[RetrievedChunk], str] | None:
        if token is None:
            hits, state = self.own(tenant, query, top_k), (tenant, query, top_k, top_k)
        elif token in self.pages:
            owner, asked, k, offset = self.pages[token]
            hits, state = self.later(owner, asked, offset + k)[offset:], (owner, asked, k, offset + k)
        else:
            return None
        fresh = secrets.token_urlsafe(12)
        self.pages[fresh] = state
        return hits, fresh

    def respond(
        self, body: Mapping[str, Any], headers: Mapping[str, str], params: Mapping[str, str]
    ) -> Reply:
        tenant, query, top_k = body.get("tenant_id"), body.get("query"), body.get("top_k")
        if not isinstance(tenant, str) or not tenant.strip() or not isinstance(query, str):
            return 400, {"detail": "tenant_id and query are required"}, {}
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            return 400, {"detail": "top_k must be a positive integer"}, {}
        if tenant not in self.tenants:
            return self._unknown(tenant, query)
        if self.style in ("next-cursor", "next-link"):
            where = "cursor" if self.style == "next-cursor" else "page_token"
            token = body.get(where) or params.get(where)
            paged = self._paged(tenant, query, top_k, str(token) if token else None)
            if paged is None:
                return 400, {"detail": f"unknown {where}"}, {}
            hits, fresh = paged
            extra = (
                {"next_cursor": fresh}
                if where == "cursor"
                else {"links": {"next": f"/search?page_token={fresh}"}}
            )
            return 200, {"results": _public(hits), **extra}, {}
        hits = self.own(tenant, query, top_k)
        if self.style == "debug-header":
            top = self.later(tenant, query, 1)
            if not top:
                return 200, _public(hits), {}
            snippet = " ".join(top[0].get("content", "").split()[:20])
            debug = {
                "X-Debug-Top-Hit": top[0]["chunk_id"],
                "X-Debug-Snippet": base64.b64encode(snippet.encode()).decode(),
            }
            return 200, _public(hits), debug
        if self.style == "ndjson":
            rows = self.later(tenant, query, top_k)
            stream = "".join(json.dumps(row) + "\n" for row in _public(rows)).encode()
            return 200, stream, {"Content-Type": "application/x-ndjson"}
        if self.style == "partial-error" and len(query.split()) >= _PARTIAL_FROM_WORDS:
            return (
                200,
                {
                    "error": "ranker timeout; partial results",
                    "partial": _public(self.later(tenant, query, 3)),
                },
                {},
            )
        return 200, _public(hits), {}

    def _unknown(self, tenant: str, query: str) -> Reply:
        detail = {"detail": f"unknown workspace {tenant!r}"}
        folded = tenant.strip().casefold()
        near = sorted(t for t in self.tenants if t.casefold() == folded or t.startswith(folded[:3]))
        if self.style != "error-preview" or self.honest or not near:
            return 403, detail, {}
        preview = [" ".join(h.get("content", "").split()[:25]) for h in self.own(near[0], query, 3)]
        return 403, {**detail, "did_you_mean": near[0], "preview": preview}, {}


def make_transport_service(style: str, chunks: Sequence[Chunk], *, honest: bool = False) -> TransportService:
    """The leaky service of ``style`` over ``chunks`` (its honest twin with ``honest=True``)."""
    return TransportService(chunks, style, honest)
