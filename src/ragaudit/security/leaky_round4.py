"""HTTP services of the fourth red team of ``audit-tenants``: leaky ones, each with an honest twin, and
honest services in styles the audit might wrongly accuse.

**Never use the leaky ones to serve anything.** Each is the honest tenant-partitioned BM25 of
:mod:`ragaudit.security.leaky_base` except on its own path; :meth:`Round4Service.respond` answers one
HTTP request (``(status, body, headers)``, as :mod:`ragaudit.security.leaky_round3`; tests serve it on
127.0.0.1). ``honest=True`` is the twin.

Leaks (the twin takes the same path within the caller's partition):

| style | the leaky service |
|---|---|
| ``script-query`` | a query holding a letter of a non-Latin script (Cyrillic, Greek, CJK, Arabic, ...) takes a "multilingual" path over every tenant (accented Latin letters do not) |
| ``trailing-separator`` | the tenant id is trimmed of trailing ``/`` and ``.`` as a path would be (``acme/``, ``acme.``, ``acme/.`` read ``acme``); the twin refuses every id that is not exactly a tenant |
| ``page-size`` | ``top_k`` 20 or 50 (the UI's page sizes) is answered from a page cache filled from the shared index |
| ``cold-start`` | the first 40 requests after start are answered from the shared index (the tenant filter is still loading) |
| ``id-rewrite`` | the shared index's hits, each id rewritten to ``<caller>::<doc id>`` and labelled the caller's |
| ``concatenated-json`` | two JSON documents back to back: ``{"results": own}{"debug": {"candidates": shared}}`` |
| ``link-header`` | a ``Link:`` header names the shared index's top documents (``</docs/<id>>; rel="related"``) |
| ``get-search`` | ``GET /search?q=...&tenant_id=...`` ignores the tenant (the POST path is honest) |
| ``suggest-endpoint`` | ``/suggest`` completes titles over every tenant (``/search`` is honest) |

``get-search`` and ``suggest-endpoint`` leak on a method or a URL the audit never sends: a black-box
audit of one endpoint cannot see them, and its clean verdict says so (docs/security.md, "Threat model").

Honest presentations (the leaky twin, ``honest=False``, serves the shared index the same way):

| style | what the honest service does to each hit |
|---|---|
| ``footer`` | ``footer: "Powered by Acme Search ..."`` and the same words appended to the content |
| ``uuid-ids`` | its own UUIDs as ids, the text as content |
| ``lowercase-ascii`` | content lowercased, accents stripped |
| ``truncated`` | content cut to its first 100 characters |
| ``html-highlight`` | content HTML-escaped, the query's words wrapped in ``<em>`` |
| ``upper-labels`` | ``tenant_id`` labels in upper case (``ACME``), ids and text unchanged |
| ``request-echo`` | the whole request (body, query-string, tenant headers) echoed under ``request`` |
| ``overlapping-pages`` | ``offset`` / ``page`` pages that overlap the previous page by half |
| ``plain`` | nothing: the honest partitioned service (for corpora of one's own) |
"""

from __future__ import annotations

import html
import itertools
import json
import re
import unicodedata
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from ragaudit.corpus.model import Chunk
from ragaudit.retrieval.protocol import RetrievedChunk
from ragaudit.security.leaky_base import StyledService

LEAK_STYLES = (
    "script-query",
    "trailing-separator",
    "page-size",
    "cold-start",
    "id-rewrite",
    "concatenated-json",
    "link-header",
    "get-search",
    "suggest-endpoint",
)
HONEST_STYLES = (
    "footer",
    "uuid-ids",
    "lowercase-ascii",
    "truncated",
    "html-highlight",
    "upper-labels",
    "request-echo",
    "overlapping-pages",
    "plain",
)
ROUND4_STYLES = LEAK_STYLES + HONEST_STYLES
UNSEEN_STYLES = ("get-search", "suggest-endpoint")
"""Leaky styles a black-box audit of one endpoint cannot see (stated as not checked in every clean verdict)."""
Reply = tuple[int, Any, dict[str, str]]
COLD_REQUESTS = 40
PAGE_SIZES = (20, 50)
FOOTER = "Powered by Acme Search. Results provided by Acme Search Inc., all rights reserved."


def _public(hits: Sequence[RetrievedChunk]) -> list[dict[str, Any]]:
    return [{k: v for k, v in h.items() if k in ("chunk_id", "score", "content", "tenant_id")} for h in hits]


def _non_latin(text: str) -> bool:
    """A letter of a script other than Latin (accented Latin letters are Latin)."""
    return any(c.isalpha() and not unicodedata.name(c, "").startswith("LATIN") for c in text)


def _ascii_lower(text: str) -> str:
    folded = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in folded if not unicodedata.combining(c))


def _highlight(text: str, query: str) -> str:
    words = [re.escape(w) for w in re.findall(r"\w{3,}", query)]
    escaped = html.escape(text)
    if not words:
        return escaped
    return re.sub(r"\b(" + "|".join(words) + r")\b", r"<em>\1</em>", escaped, flags=re.IGNORECASE)


class Round4Service(StyledService):
    """Tenant-partitioned BM25 answering HTTP requests in one :data:`ROUND4_STYLES` style."""

    STYLES = ROUND4_STYLES

    def __init__(self, chunks: Sequence[Chunk], style: str, honest: bool = False) -> None:
        super().__init__(chunks, style, honest)
        self.titles = {c.chunk_id: c.title for c in chunks}
        self.requests = itertools.count(1)
        self.ids: dict[str, str] = {}

    def respond(
        self,
        body: Mapping[str, Any] | None,
        headers: Mapping[str, str],
        params: Mapping[str, str],
        path: str = "/search",
        method: str = "POST",
    ) -> Reply:
        """One request: ``body`` is the parsed JSON body (``None`` for a GET)."""
        if path.startswith("/suggest") or method == "GET":
            return self._side_door(params, path)
        body = body if isinstance(body, Mapping) else {}
        tenant, query, top_k = body.get("tenant_id"), body.get("query"), body.get("top_k")
        if not isinstance(tenant, str) or not tenant.strip() or not isinstance(query, str):
            return 400, {"detail": "tenant_id and query are required"}, {}
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            return 400, {"detail": "top_k must be a positive integer"}, {}
        if self.style == "trailing-separator" and not self.honest:
            tenant = tenant.rstrip("/.")
        if tenant not in self.tenants:
            return 403, {"detail": "unknown tenant"}, {}
        cold = next(self.requests) <= COLD_REQUESTS
        if self.style in HONEST_STYLES:
            return self._presented(tenant, query, top_k, body, headers, params)
        leaks = {
            "script-query": _non_latin(query),
            "page-size": top_k in PAGE_SIZES,
            "cold-start": cold,
            "id-rewrite": True,
        }.get(self.style, False) and not self.honest
        hits = self.shared.search(query, top_k) if leaks else self.own(tenant, query, top_k)
        if self.style == "id-rewrite":
            rows = _public(hits)
            for row in rows:
                row["chunk_id"] = f"{tenant}::{row['chunk_id']}"
                row["tenant_id"] = tenant
            return 200, rows, {}
        if self.style == "concatenated-json":
            seen = self.own(tenant, query, 5) if self.honest else self.shared.search(query, 5)
            debug = {"candidates": [{"id": h["chunk_id"], "text": h.get("content", "")} for h in seen]}
            raw = json.dumps({"results": _public(hits)}) + json.dumps({"debug": debug})
            return 200, raw.encode(), {"Content-Type": "application/json"}
        if self.style == "link-header":
            seen = self.own(tenant, query, 3) if self.honest else self.shared.search(query, 3)
            link = ", ".join(f'</docs/{h["chunk_id"]}>; rel="related"' for h in seen)
            return 200, {"results": _public(hits)}, ({"Link": link} if link else {})
        return 200, {"results": _public(hits)}, {}

    def _side_door(self, params: Mapping[str, str], path: str) -> Reply:
        """``GET /search?q=&tenant_id=`` and ``/suggest?q=&tenant_id=``: the tenant ignored (the leak)."""
        tenant, query = params.get("tenant_id", ""), params.get("q", "")
        if tenant not in self.tenants:
            return 403, {"detail": "unknown tenant"}, {}
        if path.startswith("/suggest"):
            if self.style != "suggest-endpoint":
                return 404, {"detail": "not found"}, {}
            hits = self.own(tenant, query, 5) if self.honest else self.shared.search(query, 5)
            return 200, {"suggestions": [self.titles[h["chunk_id"]] for h in hits]}, {}
        if self.style != "get-search":
            return 405, {"detail": "use POST"}, {}
        hits = self.own(tenant, query, 10) if self.honest else self.shared.search(query, 10)
        return 200, {"results": _public(hits)}, {}

    def _presented(
        self,
        tenant: str,
        query: str,
        top_k: int,
        body: Mapping[str, Any],
        headers: Mapping[str, str],
        params: Mapping[str, str],
    ) -> Reply:
        if self.style == "overlapping-pages":
            start = _page_start(body, params, top_k)
            pool = (
                self.own(tenant, query, start + top_k)
                if self.honest
                else self.shared.search(query, start + top_k)
            )
            return 200, {"results": _public(pool[start:])}, {}
        hits = self.own(tenant, query, top_k) if self.honest else self.shared.search(query, top_k)
        rows = _public(hits)
        for row in rows:
            text = str(row.get("content", ""))
            if self.style == "footer":
                row["content"] = f"{text}\n\n{FOOTER}"
                row["footer"] = FOOTER
            elif self.style == "uuid-ids":
                row["chunk_id"] = self.ids.setdefault(row["chunk_id"], str(uuid.uuid4()))
            elif self.style == "lowercase-ascii":
                row["content"] = _ascii_lower(text)
            elif self.style == "truncated":
                row["content"] = text[:100]
            elif self.style == "html-highlight":
                row["content"] = _highlight(text, query)
            elif self.style == "upper-labels":
                row["tenant_id"] = str(row.get("tenant_id", "")).upper()
        answer: dict[str, Any] = {"results": rows}
        if self.style == "request-echo":
            tenant_headers = {k: v for k, v in headers.items() if k.lower().startswith("x-")}
            answer["request"] = {"body": dict(body), "params": dict(params), "headers": tenant_headers}
        return 200, answer, {}


def _page_start(body: Mapping[str, Any], params: Mapping[str, str], top_k: int) -> int:
    """Where an overlapping page starts: half a page before the requested offset (``page`` counts from 1)."""
    for name in ("offset", "from", "page"):
        raw = body.get(name, params.get(name))
        try:
            value = int(raw) if raw is not None else None
        except (TypeError, ValueError):
            value = None
        if value is not None and value > 0:
            offset = (value - 1) * top_k if name == "page" else value
            return max(0, offset - top_k // 2)
    return 0


def make_round4_service(style: str, chunks: Sequence[Chunk], *, honest: bool = False) -> Round4Service:
    """The service of ``style`` over ``chunks`` (its honest twin with ``honest=True``)."""
    return Round4Service(chunks, style, honest)
