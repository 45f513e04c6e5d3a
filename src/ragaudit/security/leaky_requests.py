"""Deliberately leaky services whose leak needs an unusual *request*, each with an honest twin: the
request mutations of the tenant audit (:mod:`ragaudit.security.request_mutations`) and its Unicode
tenant ids exist to catch them.

**Never use these to serve anything.** Each is the honest tenant-partitioned BM25 of
:mod:`ragaudit.security.leaky_base` except on one request shape, where the leaky one takes a path that
forgets the tenant and its honest twin handles the same shape correctly (or refuses it):

| style | the leaky service | its honest twin |
|---|---|---|
| ``short-query`` | an empty or 1-2 character query gets "popular documents" of every tenant | refuses an empty query, gives the caller's own popular documents |
| ``long-query`` | a query of more than 20 words goes to a "more like this" path over the shared index | searches the caller's partition |
| ``quoted-phrase`` | a quoted phrase goes to a phrase path over the shared index | searches the caller's partition |
| ``boolean-query`` | `` OR `` / `` AND `` / ``NOT`` go to an "advanced search" path over the shared index | drops the operators, searches the caller's partition |
| ``field-query`` | ``field:value`` goes to a query-string path where ``tenant_id:X`` replaces the filter | drops the field names, searches the caller's partition |
| ``wildcard-query`` | ``*`` / ``?`` go to a wildcard path over the shared index (``*`` alone: popular documents of every tenant) | the same within the caller's partition |
| ``non-ascii-query`` | a query with a non-ASCII character goes to a "multilingual" path over the shared index (accents folded) | the same path within the caller's partition |
| ``deep-top-k`` | ``top_k`` above 64 is served from the shared (export) index | refuses ``top_k`` above 64 (HTTP 400) |
| ``offset-page`` | ``offset`` > 0 in the body: later pages from the shared index | pages within the caller's partition |
| ``page-param`` | ``?page=`` > 1: later pages from the shared index | pages within the caller's partition |
| ``tenant-header`` | an ``X-Tenant`` header wins over the body's ``tenant_id`` | refuses a header that disagrees with the body (HTTP 400) |
| ``tenant-param`` | ``?tenant=`` wins over the body's ``tenant_id`` | ignores it |
| ``filter-override`` | a ``filter`` object in the body replaces the tenant filter (``{"filter": {"tenant_id": X}}`` reads X) | ANDs it with the tenant filter |
| ``accent-fold`` | tenant ids compared without accents (``acmé`` → ``acme``, NFD forms) | refuses every id that is not exactly a tenant |
| ``nfkc-fold`` | tenant ids compared after NFKC (fullwidth, mathematical letters, ``ſ``) | the same |
| ``confusable-fold`` | Cyrillic and Greek look-alikes mapped to Latin before the comparison | the same |

The honest twins of the folds use the same fold to *recognise* a look-alike and refuse it (HTTP 403).
Every service answers ``handle(body, headers, params) -> (status, JSON)`` (a test serves it over real
HTTP on 127.0.0.1) and ``search(*, tenant_id, query, top_k)`` (a Python retriever: no headers, no
query string, no extra body fields, so the pagination and tenant-channel ones never leak through it;
:data:`HTTP_ONLY`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragaudit.corpus.model import Chunk
from ragaudit.errors import PermanentRetrievalError
from ragaudit.retrieval.protocol import RetrievedChunk, chunk_result
from ragaudit.retrieval.tenancy import require_tenant
from ragaudit.security.leaky_base import Partitioned

DEEP_ABOVE = 64
_BOOLEAN = re.compile(r"\s(?:OR|AND)\s|(?:^|\s)NOT\s")
_FIELD = re.compile(r"(\w+):(\S+)")
_CONFUSABLES = str.maketrans(
    "аеорсухіјѕԁһӏАВЕКМНОРСТХУαοινκρτυΑΒΕΗΙΚΜΝΟΡΤΧΥΖ",
    "aeopcyxijsdhlABEKMHOPCTXYaoivkptuABEHIKMNOPTXYZ",
)
"""Cyrillic and Greek letters that look like Latin ones, and those Latin letters (a skeleton map)."""


def _unaccent(text: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", text) if unicodedata.category(c) != "Mn")


FOLDS: Mapping[str, Callable[[str], str]] = {
    "accent": _unaccent,
    "nfkc": lambda text: unicodedata.normalize("NFKC", text),
    "confusable": lambda text: text.translate(_CONFUSABLES),
}


@dataclass(frozen=True)
class WireRequest:
    """What reached the service beside ``tenant_id``, ``query`` and ``top_k``."""

    body: Mapping[str, Any] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    """Lower-cased header names."""
    params: Mapping[str, str] = field(default_factory=dict)


class Refused(Exception):
    """The service refuses the request (an HTTP 4xx over the wire, an error for a Python caller)."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status


class RequestService(Partitioned):
    """Tenant-partitioned BM25 with one request-dependent path (:meth:`serve`); ``honest`` chooses the
    twin. ``handle`` is the HTTP face, ``search`` the Python one."""

    style = ""

    def __init__(self, chunks: Sequence[Chunk], honest: bool = False) -> None:
        super().__init__(chunks)
        self.honest = honest
        self.tenants = frozenset(c.tenant_id for c in chunks)
        by_tenant: dict[str, list[Chunk]] = {}
        for chunk in chunks:
            by_tenant.setdefault(chunk.tenant_id, []).append(chunk)
        self.by_tenant = by_tenant
        rows = [list(group) for group in by_tenant.values()]
        self.popular = [row[i] for i in range(max(map(len, rows), default=0)) for row in rows if i < len(row)]
        """Every tenant's chunks interleaved: the "popular documents" of a service that forgets the tenant."""

    def popular_of(self, tenant: str | None, top_k: int) -> list[RetrievedChunk]:
        chunks = self.popular if tenant is None else self.by_tenant.get(tenant, [])
        return [chunk_result(c, 1.0 / (rank + 1)) for rank, c in enumerate(chunks[:top_k])]

    def serve(self, tenant: str, query: str, top_k: int, wire: WireRequest) -> list[RetrievedChunk]:
        return self.own(tenant, query, top_k)

    def handle(
        self, body: Mapping[str, Any], headers: Mapping[str, str], params: Mapping[str, str]
    ) -> tuple[int, Any]:
        """Answer one HTTP request: ``(status, JSON body)``."""
        tenant, query, top_k = body.get("tenant_id"), body.get("query"), body.get("top_k")
        if not isinstance(tenant, str) or not tenant.strip() or not isinstance(query, str):
            return 400, {"detail": "tenant_id and query are required"}
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            return 400, {"detail": "top_k must be a positive integer"}
        try:
            hits = self.serve(tenant, query, top_k, WireRequest(body, headers, params))
        except Refused as refused:
            return refused.status, {"detail": str(refused)}
        return 200, [{k: h[k] for k in ("chunk_id", "score", "content", "tenant_id") if k in h} for h in hits]

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        tenant = require_tenant(tenant_id)
        try:
            return self.serve(tenant, query, top_k, WireRequest())
        except Refused as refused:
            raise PermanentRetrievalError(f"HTTP {refused.status}: {refused}") from None


class QueryShapeService(RequestService):
    """A query of one shape (``short``, ``long``, ``quoted``, ``boolean``, ``field``, ``wildcard``)
    takes a path that forgets the tenant (the honest twin keeps it)."""

    def __init__(self, chunks: Sequence[Chunk], shape: str, honest: bool = False) -> None:
        super().__init__(chunks, honest)
        if shape not in SHAPES:
            raise ValueError(f"unknown query shape {shape!r}; one of {', '.join(SHAPES)}")
        self.shape = shape

    def serve(self, tenant: str, query: str, top_k: int, wire: WireRequest) -> list[RetrievedChunk]:
        shaped = SHAPES[self.shape](query)
        if shaped is None:
            return self.own(tenant, query, top_k)
        scope = tenant if self.honest else None  # None: the bug, every tenant
        if self.shape == "short":
            if self.honest and not shaped:
                raise Refused(400, "query must not be empty")
            return self.popular_of(scope, top_k)  # a short query gets popular documents
        if self.shape == "wildcard":
            return self.prefixed(scope, shaped, top_k)
        if self.shape == "field" and not self.honest:
            named = dict(_FIELD.findall(query)).get("tenant_id")
            if named:  # the bug: a tenant_id clause in the query string replaces the filter
                return self.own(named, shaped, top_k)
        return self.own(tenant, shaped, top_k) if self.honest else self.shared.search(shaped, top_k)

    def prefixed(self, tenant: str | None, prefixes: str, top_k: int) -> list[RetrievedChunk]:
        """Chunks holding a word that starts with one of ``prefixes`` (all chunks for none), in order."""
        pattern = re.compile("|".join(rf"\b{re.escape(p)}" for p in prefixes.split()) or "", re.IGNORECASE)
        chunks = self.popular if tenant is None else self.by_tenant.get(tenant, [])
        hits = [c for c in chunks if pattern.search(c.text)][:top_k]
        return [chunk_result(c, 1.0 / (rank + 1)) for rank, c in enumerate(hits)]


def _short(query: str) -> str | None:
    return query.strip() if len(query.strip()) <= 2 else None


def _long(query: str) -> str | None:
    return query if len(query.split()) > 20 else None


def _quoted(query: str) -> str | None:
    return query.replace('"', " ") if re.search(r'"[^"]+"', query) else None


def _boolean(query: str) -> str | None:
    return re.sub(r"\b(?:OR|AND|NOT)\b", " ", query) if _BOOLEAN.search(query) else None


def _fielded(query: str) -> str | None:
    return _FIELD.sub(r"\2", query) if _FIELD.search(query) else None


def _non_ascii(query: str) -> str | None:
    return _unaccent(query) if any(ord(ch) > 127 for ch in query) else None


def _wildcard(query: str) -> str | None:
    if "*" not in query and "?" not in query:
        return None
    return " ".join(query.replace("*", " ").replace("?", " ").split())


SHAPES: Mapping[str, Callable[[str], str | None]] = {
    "short": _short,
    "long": _long,
    "quoted": _quoted,
    "boolean": _boolean,
    "field": _fielded,
    "wildcard": _wildcard,
    "non-ascii": _non_ascii,
}
"""Each shape: the query a service of that shape ranks by, or ``None`` when the query is not of it."""


class DeepTopKService(RequestService):
    """``top_k`` above ``above`` comes from the shared (export) index; the twin refuses it."""

    def __init__(self, chunks: Sequence[Chunk], honest: bool = False, above: int = DEEP_ABOVE) -> None:
        super().__init__(chunks, honest)
        self.above = above

    def serve(self, tenant: str, query: str, top_k: int, wire: WireRequest) -> list[RetrievedChunk]:
        if top_k <= self.above:
            return self.own(tenant, query, top_k)
        if self.honest:
            raise Refused(400, f"top_k must be at most {self.above}")
        return self.shared.search(query, top_k)


class PaginationService(RequestService):
    """A page beyond the first (``offset`` in the body, or ``?page=``) comes from the shared index; the
    twin pages within the caller's partition."""

    def __init__(self, chunks: Sequence[Chunk], where: str = "offset", honest: bool = False) -> None:
        super().__init__(chunks, honest)
        self.where = where

    def _skip(self, top_k: int, wire: WireRequest) -> int:
        raw = wire.body.get("offset", 0) if self.where == "offset" else wire.params.get("page", "1")
        try:
            value = int(raw)
        except (TypeError, ValueError):
            raise Refused(400, f"bad {self.where}: {raw!r}") from None
        return max(0, value) if self.where == "offset" else max(0, value - 1) * top_k

    def serve(self, tenant: str, query: str, top_k: int, wire: WireRequest) -> list[RetrievedChunk]:
        skip = self._skip(top_k, wire)
        if skip == 0 or self.honest:
            return self.own(tenant, query, skip + top_k)[skip:]
        return self.shared.search(query, skip + top_k)[skip:]  # the bug: later pages forgot the tenant


class TenantChannelService(RequestService):
    """The tenant is read a second time from a header (``header``) or the query string (``param``), and
    the leaky one lets it win over the body; the twin refuses a disagreeing header / ignores the
    parameter."""

    def __init__(
        self, chunks: Sequence[Chunk], channel: str = "header", name: str = "", honest: bool = False
    ) -> None:
        super().__init__(chunks, honest)
        self.channel = channel
        self.name = (name or ("x-tenant" if channel == "header" else "tenant")).lower()

    def serve(self, tenant: str, query: str, top_k: int, wire: WireRequest) -> list[RetrievedChunk]:
        source = wire.headers if self.channel == "header" else wire.params
        second = source.get(self.name)
        if second is None or second == tenant:
            return self.own(tenant, query, top_k)
        if not self.honest:
            return self.own(second, query, top_k)  # the bug: the second channel wins
        if self.channel == "header":
            raise Refused(400, f"the {self.name} header disagrees with tenant_id")
        return self.own(tenant, query, top_k)


class FilterOverrideService(RequestService):
    """A ``filter`` object in the body: the leaky service lets its ``tenant_id`` replace the tenant
    filter; the twin ANDs it with the tenant filter (a filter naming another tenant matches nothing)."""

    def serve(self, tenant: str, query: str, top_k: int, wire: WireRequest) -> list[RetrievedChunk]:
        given = wire.body.get("filter")
        named = given.get("tenant_id") if isinstance(given, Mapping) else None
        if not isinstance(named, str) or named == tenant:
            return self.own(tenant, query, top_k)
        return [] if self.honest else self.own(named, query, top_k)  # the bug: the caller's filter wins


class TenantFoldService(RequestService):
    """Tenant ids compared after a fold (:data:`FOLDS`): the leaky one serves the tenant the folded id
    matches; the twin refuses every id that is not exactly a tenant (a look-alike with HTTP 403)."""

    def __init__(self, chunks: Sequence[Chunk], fold: str = "accent", honest: bool = False) -> None:
        super().__init__(chunks, honest)
        self.fold = FOLDS[fold]
        self.folded = {self.fold(t): t for t in sorted(self.tenants)}

    def serve(self, tenant: str, query: str, top_k: int, wire: WireRequest) -> list[RetrievedChunk]:
        if tenant in self.tenants:
            return self.own(tenant, query, top_k)
        match = self.folded.get(self.fold(tenant))
        if self.honest:
            what = f"looks like tenant {match!r} but is not it" if match else "is not a tenant"
            raise Refused(403, f"tenant_id {tenant!r} {what}")
        return self.own(match, query, top_k) if match else []


def _make(style: str, honest: bool, chunks: Sequence[Chunk]) -> RequestService:
    if style == "filter-override":
        return FilterOverrideService(chunks, honest)
    if style.endswith("-query") or style == "quoted-phrase":
        shape = {"quoted-phrase": "quoted", "boolean-query": "boolean", "field-query": "field"}.get(
            style, style.removesuffix("-query")
        )
        return QueryShapeService(chunks, shape, honest)
    if style == "deep-top-k":
        return DeepTopKService(chunks, honest)
    if style in ("offset-page", "page-param"):
        return PaginationService(chunks, "offset" if style == "offset-page" else "page", honest)
    if style in ("tenant-header", "tenant-param"):
        return TenantChannelService(chunks, style.removeprefix("tenant-"), honest=honest)
    return TenantFoldService(chunks, style.removesuffix("-fold"), honest)


STYLES = (
    "short-query",
    "long-query",
    "quoted-phrase",
    "boolean-query",
    "field-query",
    "wildcard-query",
    "deep-top-k",
    "offset-page",
    "page-param",
    "tenant-header",
    "tenant-param",
    "accent-fold",
    "nfkc-fold",
    "confusable-fold",
    "non-ascii-query",
    "filter-override",
)
"""Every request-side leak style; each has a leaky service and an honest twin
(:data:`ragaudit.security.leaky.REQUEST_LEAKS`)."""
HTTP_ONLY = ("offset-page", "page-param", "tenant-header", "tenant-param", "filter-override")
"""Styles whose leak needs a channel only HTTP has (a body field, the query string, a header)."""


def make_request_service(style: str, chunks: Sequence[Chunk], *, honest: bool = False) -> RequestService:
    """The leaky service of ``style`` over ``chunks`` (its honest twin with ``honest=True``)."""
    if style not in STYLES:
        raise ValueError(f"unknown request leak style {style!r}; one of: {', '.join(STYLES)}")
    return _make(style, honest, chunks)
