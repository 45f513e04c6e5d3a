"""Deliberately leaky HTTP services of the third red team of ``audit-tenants``, each with an honest twin.

**Never use these to serve anything.** Each is the honest tenant-partitioned BM25 of
:mod:`ragaudit.security.leaky_base` except on its own path; :meth:`Round3Service.respond` answers one
HTTP request (``(status, body, headers)``, as :mod:`ragaudit.security.leaky_transport`; tests serve it
on 127.0.0.1):

| style | the leaky service | its honest twin |
|---|---|---|
| ``jwt-claims`` | the tenant is the ``tenant`` claim of a bearer JWT read **without checking its signature** (``alg: none`` and a swapped claim pass) | checks the HS256 signature (401 otherwise) |
| ``tenant-list`` | a body list ``tenant_ids`` / ``tenants`` widens the search to every tenant it names | ignores it |
| ``tenant-prefix`` | the store matches the tenant by prefix (``LIKE 'acme%'``: ``acme`` also sees ``acme-eu``, ``acm`` sees ``acme``) | exact match, unknown ids refused |
| ``search-history`` | ``recent_searches``: the last 5 queries of **any** tenant | the caller's own last 5 (which hold other tenants' text: the audit asks their probes) |
| ``sse`` | streams the shared index's hits as server-sent events (``text/event-stream``) | streams the caller's own |
| ``count-total`` | the page is the caller's, ``total`` counts every tenant's matches | ``total`` counts the caller's |
| ``every-nth`` | one request in ``n`` (5,000 by default) answered from the shared index | never |
| ``sticky-cookie`` | a session cookie set on the first answer; the session's tenant wins over the body's | a session whose tenant disagrees with the body is replaced |
| ``nested-encoded`` | ``meta.trace``: base64 of JSON whose ``debug`` is a JSON string holding the unfiltered top snippets | the caller's own top snippets |
| ``nosql-filter`` | ``tenant_id`` passed into a document store's query as it came: a list means ``$in``, ``{"$ne": null}`` / ``{"$in": [...]}`` / ``{"$regex": ...}`` are operators | refuses a ``tenant_id`` that is not a string (400) |
| ``repeated-key`` | the JSON answer names ``results`` twice: the shared index's hits first, the caller's last (what a client keeps) | the caller's own hits both times |
| ``redirect-export`` | ``top_k`` above 50 answered ``307`` to ``/search/export``, which serves the shared index (a client that follows redirects, as most do, gets it) | the export path serves the caller's partition |
| ``duplicate-key`` | one key per tenant; the key is checked against the **first** ``tenant_id`` of the JSON body, the data read for the **last** | refuses a body naming ``tenant_id`` twice (400) |

``count-total`` and ``every-nth`` (with ``n`` above the audit's request count) are leaks a black-box
audit does not see: a count is attributed to no one, and a leak rarer than the detection power is
missed; the audit's clean verdict says both are not checked (docs/security.md, "Threat model").
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import itertools
import json
import re
import secrets
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from ragaudit.corpus.model import Chunk
from ragaudit.retrieval.protocol import RetrievedChunk
from ragaudit.security.leaky_base import StyledService

ROUND3_STYLES = (
    "jwt-claims",
    "tenant-list",
    "tenant-prefix",
    "search-history",
    "sse",
    "count-total",
    "every-nth",
    "sticky-cookie",
    "nested-encoded",
    "duplicate-key",
    "nosql-filter",
    "repeated-key",
    "redirect-export",
)
UNSEEN_STYLES = ("count-total", "every-nth")
"""Leaky styles the default audit cannot see (stated as not checked in every clean verdict)."""
Reply = tuple[int, Any, dict[str, str]]
EVERY_NTH = 5000
_EXPORT_ABOVE = 50
_HISTORY = 5
_SIGNING_KEY = b"round3-demo-signing-key"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def signed_token(tenant: str, key: bytes = _SIGNING_KEY) -> str:
    """An HS256 JWT whose ``tenant`` claim names ``tenant`` (the keys the ``jwt-claims`` service issues)."""
    head = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = _b64url(json.dumps({"sub": f"svc-{tenant}", "tenant": tenant, "scope": "search"}).encode())
    mac = hmac.new(key, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64url(mac)}"


def _claims(token: str, verify: bool) -> dict[str, Any] | None:
    """The claims of a JWT: read as they are (``verify=False``, the bug) or only when HS256-signed."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        head, claims = json.loads(_unb64url(parts[0])), json.loads(_unb64url(parts[1]))
    except ValueError:
        return None
    if not isinstance(head, dict) or not isinstance(claims, dict):
        return None
    if verify:
        mac = hmac.new(_SIGNING_KEY, f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
        if head.get("alg") != "HS256" or not hmac.compare_digest(_b64url(mac), parts[2]):
            return None
    return claims


def _matches(condition: Any, owner: str) -> bool:
    """A document store's match of ``owner`` against a tenant condition taken from the request as it came
    (the ``nosql-filter`` bug): a list is ``$in``, an object holds operators."""
    if isinstance(condition, list):
        return owner in condition
    if isinstance(condition, dict):
        return all(_operator(op, value, owner) for op, value in condition.items())
    return bool(owner == condition)


def _operator(op: str, value: Any, owner: str) -> bool:
    if op == "$in":
        return isinstance(value, list) and owner in value
    if op == "$ne":
        return bool(owner != value)
    if op == "$regex":
        return isinstance(value, str) and re.search(value, owner) is not None
    return op == "$eq" and bool(owner == value)


def _public(hits: Sequence[RetrievedChunk]) -> list[dict[str, Any]]:
    return [{k: v for k, v in h.items() if k in ("chunk_id", "score", "content", "tenant_id")} for h in hits]


def _snippets(hits: Sequence[RetrievedChunk]) -> list[str]:
    return [" ".join(h.get("content", "").split()[:25]) for h in hits]


class Round3Service(StyledService):
    """Tenant-partitioned BM25 answering HTTP requests in one :data:`ROUND3_STYLES` style."""

    STYLES = ROUND3_STYLES

    def __init__(
        self, chunks: Sequence[Chunk], style: str, honest: bool = False, every: int = EVERY_NTH
    ) -> None:
        super().__init__(chunks, style, honest)
        self.every = every
        self.requests = itertools.count(1)
        self.history: dict[str | None, deque[str]] = {}
        self.sessions: dict[str, str] = {}

    def keys(self) -> dict[str, str]:
        """The client's keys per tenant (signed JWTs for ``jwt-claims``; opaque tokens otherwise)."""
        if self.style == "jwt-claims":
            return {t: signed_token(t) for t in sorted(self.tenants)}
        return {
            t: "rk_" + hashlib.sha256(_SIGNING_KEY + t.encode()).hexdigest()[:24]
            for t in sorted(self.tenants)
        }

    def respond(
        self,
        body: Mapping[str, Any],
        headers: Mapping[str, str],
        params: Mapping[str, str],
        raw: bytes = b"",
        path: str = "/search",
    ) -> Reply:
        tenant, query, top_k = body.get("tenant_id"), body.get("query"), body.get("top_k")
        if self.style == "nosql-filter" and not self.honest and isinstance(tenant, (list, dict)):
            if not isinstance(query, str) or not isinstance(top_k, int):
                return 400, {"detail": "query and top_k are required"}, {}
            return 200, _public(self.shared.filtered(query, top_k, lambda owner: _matches(tenant, owner))), {}
        if not isinstance(tenant, str) or not tenant.strip() or not isinstance(query, str):
            return 400, {"detail": "tenant_id and query are required"}, {}
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            return 400, {"detail": "top_k must be a positive integer"}, {}
        if self.style == "tenant-prefix" and not self.honest:
            hits = self.shared.filtered(query, top_k, lambda owner: owner.startswith(tenant))
            return 200, _public(hits), {}
        if self.style == "redirect-export" and tenant in self.tenants:
            if path.startswith("/search/export"):
                rows = self.own(tenant, query, top_k) if self.honest else self.shared.search(query, top_k)
                return 200, _public(rows), {}
            if top_k > _EXPORT_ABOVE:
                return (
                    307,
                    {"detail": "large pages are served by the export path"},
                    {"Location": "/search/export"},
                )
        if self.style == "jwt-claims":
            return self._claimed(tenant, query, top_k, headers)
        if self.style == "duplicate-key":
            return self._keyed(query, top_k, headers, raw)
        if tenant not in self.tenants:
            return 403, {"detail": f"unknown tenant {tenant!r}"}, {}
        if self.style == "sticky-cookie":
            return self._session(tenant, query, top_k, headers)
        return self._styled(tenant, query, top_k, body)

    def _claimed(self, tenant: str, query: str, top_k: int, headers: Mapping[str, str]) -> Reply:
        auth = {k.lower(): v for k, v in headers.items()}.get("authorization", "")
        claims = _claims(auth.removeprefix("Bearer ").strip(), verify=self.honest)
        claimed = claims.get("tenant") if claims is not None else None
        if not isinstance(claimed, str) or claimed not in self.tenants:
            return 401, {"detail": "a valid bearer token is required"}, {}
        if claimed != tenant:
            return 403, {"detail": "tenant_id does not match the token"}, {}
        return 200, _public(self.own(claimed, query, top_k)), {}

    def _keyed(self, query: str, top_k: int, headers: Mapping[str, str], raw: bytes) -> Reply:
        auth = {k.lower(): v for k, v in headers.items()}.get("authorization", "").removeprefix("Bearer ")
        key_tenant = {key: t for t, key in self.keys().items()}.get(auth.strip())
        if key_tenant is None:
            return 401, {"detail": "a valid API key is required"}, {}
        named = [v for k, v in json.loads(raw, object_pairs_hook=list) if k == "tenant_id"]
        if len(named) > 1 and self.honest:
            return 400, {"detail": "tenant_id is given more than once"}, {}
        if named[0] != key_tenant:  # the gateway reads the first occurrence ...
            return 403, {"detail": "tenant_id does not match the API key"}, {}
        return 200, _public(self.own(str(named[-1]), query, top_k)), {}  # ... the search the last

    def _session(self, tenant: str, query: str, top_k: int, headers: Mapping[str, str]) -> Reply:
        cookies = {k.lower(): v for k, v in headers.items()}.get("cookie", "")
        sid = next((c.split("=", 1)[1] for c in cookies.split("; ") if c.startswith("sid=")), None)
        session = self.sessions.get(sid) if sid is not None else None
        if session is not None and (session == tenant or not self.honest):
            return 200, _public(self.own(session, query, top_k)), {}
        fresh = secrets.token_urlsafe(12)
        self.sessions[fresh] = tenant
        return 200, _public(self.own(tenant, query, top_k)), {"Set-Cookie": f"sid={fresh}; Path=/; HttpOnly"}

    def _styled(self, tenant: str, query: str, top_k: int, body: Mapping[str, Any]) -> Reply:
        hits = self.own(tenant, query, top_k)
        if self.style == "tenant-list":
            named = body.get("tenant_ids", body.get("tenants"))
            if isinstance(named, list) and not self.honest:
                allowed = {str(t) for t in named} | {tenant}
                hits = self.shared.filtered(query, top_k, lambda owner: owner in allowed)
            return 200, {"results": _public(hits)}, {}
        if self.style == "search-history":
            seen = self.history.setdefault(tenant if self.honest else None, deque(maxlen=_HISTORY))
            recent = list(seen)
            seen.appendleft(query)
            return 200, {"results": _public(hits), "recent_searches": recent}, {}
        if self.style == "sse":
            rows = hits if self.honest else self.shared.search(query, top_k)
            events = "".join(f"event: hit\ndata: {json.dumps(row)}\n\n" for row in _public(rows))
            return 200, (events + "data: [DONE]\n\n").encode(), {"Content-Type": "text/event-stream"}
        if self.style == "count-total":
            counted = (
                self.own(tenant, query, self.shared.size)
                if self.honest
                else self.shared.search(query, self.shared.size)
            )
            return 200, {"results": _public(hits), "total": len(counted)}, {}
        if self.style == "every-nth":
            if next(self.requests) % self.every == 0 and not self.honest:
                hits = self.shared.search(query, top_k)
            return 200, _public(hits), {}
        if self.style == "repeated-key":
            first = hits if self.honest else self.shared.search(query, top_k)
            raw = f'{{"results": {json.dumps(_public(first))}, "results": {json.dumps(_public(hits))}}}'
            return 200, raw.encode(), {"Content-Type": "application/json"}
        if self.style != "nested-encoded":  # nosql-filter: a string tenant takes the plain path
            return 200, _public(hits), {}
        top = self.own(tenant, query, 3) if self.honest else self.shared.search(query, 3)
        debug = json.dumps({"top": _snippets(top), "ids": [h["chunk_id"] for h in top]})
        trace = base64.b64encode(json.dumps({"ranker": {"debug": debug}}).encode()).decode()
        return 200, {"results": _public(hits), "meta": {"trace": trace}}, {}


def make_round3_service(
    style: str, chunks: Sequence[Chunk], *, honest: bool = False, every: int = EVERY_NTH
) -> Round3Service:
    """The leaky service of ``style`` over ``chunks`` (its honest twin with ``honest=True``)."""
    return Round3Service(chunks, style, honest, every)
