"""Query a live retrieval service over HTTP (needs the ``http`` extra: httpx).

Request: ``POST url`` with the JSON body ``{"tenant_id": ..., "query": ..., "top_k": ...}``; the three
names can be changed with ``request_fields`` (e.g. ``{"query": "q", "top_k": "k"}``).
``search(..., extras=RequestExtras(...))`` adds headers, query-string parameters and body fields to one
request, can send the tenant field twice in the body, and, with per-tenant JWT keys, a key forged for
another tenant (:mod:`ragaudit.retrieval.request_extras`, :mod:`ragaudit.retrieval.forged_tokens`; the
tenant audit's request mutations use them).

Response: a JSON list of chunk objects, or an object holding that list under ``results_path`` (a
dotted path such as ``"data.hits"``; by default the top-level list, or the object's ``results`` key),
or newline-delimited JSON (``application/x-ndjson``, JSON Lines: one chunk object per line), or
server-sent events (``text/event-stream``: each event's ``data`` a chunk object or a list of them).
``field_map`` says where each chunk field is in the service's objects, dotted for nesting, e.g.
``{"chunk_id": "id", "tenant_id": "meta.tenant"}``; unmapped fields keep their own names. Only
``chunk_id`` is required (a string, or an integer taken as its decimal string); ``score`` must be a
finite number, ``content`` / ``source_id`` / ``tenant_id`` strings and ``metadata`` an object when
present. Fields the service does not send are left out of the returned chunks. Every other field of
a chunk object (``title``, ``snippet``, ``highlight``, nested objects: anything not mapped to one of
the fields above) is kept, as sent, under ``extra``, so the tenant checks see it too. The list order
is the ranking. The returned list is a :class:`~ragaudit.retrieval.protocol.RetrievedList` that also
holds the whole parsed body (``response``) and the chunk list's JSON path in it (``items_path``), so
the tenant audit reads the fields beside the results (``debug``, ``facets``, ``suggest``) too, and the
response headers (``headers``, but the transport's own). A failed request's error keeps what the
service answered (``RetrievalError.response``: the body of a 4xx / 5xx, or of a 200 that is no ranking,
parsed JSON or text; ``.headers``), so a refusal that carries another tenant's data is seen too.

Credentials: ``auth_header_env`` names an environment variable read at every request; its value is
sent as ``<auth_header>: <auth_scheme> <value>`` (``auth_scheme=""`` sends the bare value, e.g. for
``X-API-Key``). The value is never stored on the object and never part of its ``repr``. Every form of
it (raw, JSON-escaped, URL-encoded, base64, hex, pieces of 8+ characters; see
:mod:`ragaudit.redaction`) is replaced by ``[redacted]`` at the source: in the response body before
it is parsed (so chunk ids, content, metadata, source ids hold no trace of it) and in every message
built from a response or a transport error. The URL is shown without user info, query string or
fragment.

Per-tenant credentials: ``tenant_keys`` (a client keys file, :mod:`ragaudit.retrieval.endpoint_keys`)
sends each request with the key of the tenant it is made for, in the same header; a tenant without a
key there falls back to ``auth_header_env`` when set, else goes without (a service that binds the
tenant to the key, such as ``ragaudit serve``, then refuses it).

Redirects: a same-origin ``307`` / ``308`` is followed (at most :data:`MAX_REDIRECTS`), with the same
method, body and credential, as a client follows it; any other redirect is an error naming the status.

Failures (:mod:`ragaudit.errors`): timeouts, connection failures and HTTP 408/429/5xx are
transient (the runner retries them, honouring ``Retry-After``); other non-2xx statuses, bodies that
are not JSON and chunks of the wrong shape are permanent, with a message naming the field and what
was expected.
"""

from __future__ import annotations

import json
import os
import ssl
from collections.abc import Mapping
from types import TracebackType
from typing import TYPE_CHECKING, Any
from urllib.parse import urljoin, urlsplit, urlunsplit

from ragaudit.errors import (
    InputError,
    PermanentRetrievalError,
    RetrievalError,
    TransientRetrievalError,
)
from ragaudit.redaction import MARKER, redactor
from ragaudit.retrieval.forged_tokens import forge, names_tenant
from ragaudit.retrieval.http_pool import _import_httpx, _ShardedClients
from ragaudit.retrieval.http_response import (
    CHUNK_FIELDS,
    ResponseShape,
    _excerpt,
    answered_body,
    response_headers,
)
from ragaudit.retrieval.http_status import _retry_after, _status_hint
from ragaudit.retrieval.protocol import RetrievedChunk
from ragaudit.retrieval.request_extras import ALL_CHANNELS, CHANNELS, Channel, RequestExtras

if TYPE_CHECKING:
    from ragaudit.retrieval.endpoint_keys import EndpointKeys

__all__ = [
    "CHUNK_FIELDS",
    "REDACTED",
    "REQUEST_FIELDS",
    "HttpRetriever",
    "ResponseShape",
    "answered_body",
    "display_url",
    "endpoint_name",
    "response_headers",
]

REQUEST_FIELDS = ("tenant_id", "query", "top_k")
MAX_REDIRECTS = 3
"""Same-origin ``307`` / ``308`` redirects followed per request (see :func:`same_origin_redirect`)."""
REDACTED = MARKER
_DEFAULT_POOL = 16


def display_url(url: str) -> str:
    """``url`` without user info, query string or fragment (where credentials tend to hide)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def same_origin_redirect(url: str, status: int, location: str | None) -> str | None:
    """Where a ``307`` / ``308`` answer to a POST to ``url`` sends it, when that is on the same origin
    (scheme, host and port): such a redirect keeps the method and the body, and a client follows it (a
    service's large-page or export path can sit behind one), so it is followed with the same credential.
    Any other redirect is not (another origin would receive the credential; ``301`` / ``302`` / ``303``
    turn the POST into a GET without the body) and stays an error naming the status."""
    if status not in (307, 308) or not location:
        return None
    target = urljoin(url, location)
    here, there = urlsplit(url), urlsplit(target)
    same = (here.scheme, here.hostname, here.port) == (there.scheme, there.hostname, there.port)
    return target if same else None


def endpoint_name(url: str) -> str:
    """A service's name in reports and the run history: host, port and path of ``url``
    (``localhost:8000/search``), so two services never share a name; no scheme, user info or query."""
    display = display_url(url)
    return display.split("://", 1)[-1].rstrip("/") or "endpoint"


class HttpRetriever:
    """A :class:`~ragaudit.retrieval.protocol.Retriever` backed by an HTTP endpoint (see module docs)."""

    request_channels: frozenset[Channel] = frozenset(CHANNELS)
    """``search(..., extras=RequestExtras(...))`` sends extra headers, query-string parameters and body
    fields (:mod:`ragaudit.retrieval.request_extras`); with ``tenant_keys``, also another tenant's key
    (``credential``)."""

    def __init__(
        self,
        url: str,
        *,
        field_map: Mapping[str, str] | None = None,
        request_fields: Mapping[str, str] | None = None,
        results_path: str | None = None,
        auth_header_env: str | None = None,
        auth_header: str = "Authorization",
        auth_scheme: str = "Bearer",
        timeout_s: float = 30.0,
        headers: Mapping[str, str] | None = None,
        max_connections: int | None = None,
        tenant_keys: str | None = None,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise InputError(
                "http retriever",
                None,
                f"not an http(s) URL: {display_url(url)!r}",
                "e.g. http://localhost:8000/search",
            )
        unknown = sorted(set(request_fields or {}) - set(REQUEST_FIELDS))
        if unknown:
            raise InputError(
                "http retriever",
                None,
                f"unknown request_fields key(s): {', '.join(unknown)}",
                f"rename only these request fields: {', '.join(REQUEST_FIELDS)}",
            )
        if timeout_s <= 0:
            raise InputError(
                "http retriever", None, f"timeout_s must be positive (got {timeout_s})", "e.g. 30"
            )
        if max_connections is not None and max_connections <= 0:
            raise InputError("http retriever", None, "max_connections must be positive", "or leave it unset")
        if headers and auth_header_env and auth_header.lower() in {h.lower() for h in headers}:
            raise InputError(
                "http retriever",
                None,
                f"header {auth_header!r} is given both in headers and through auth_header_env",
                "keep credentials in the environment variable only",
            )
        # user info in the URL would go out as a Basic credential (replacing the bearer token) and could be
        # echoed into artifacts: it is dropped; credentials come only from auth_header_env
        host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
        netloc = host + (f":{parts.port}" if parts.port is not None else "")
        self.url = urlunsplit(parts._replace(netloc=netloc))
        self.request_fields = {name: (request_fields or {}).get(name, name) for name in REQUEST_FIELDS}
        self.shape = ResponseShape.build(field_map, results_path)
        self.auth_header_env = auth_header_env
        self.auth_header = auth_header
        self.auth_scheme = auth_scheme
        self.timeout_s = timeout_s
        self._headers = dict(headers or {})
        self._max_connections = max_connections
        self._pool_size = max_connections or _DEFAULT_POOL
        self._clients: _ShardedClients | None = None
        self._tls: ssl.SSLContext | None = None
        self._tenant_keys = None if tenant_keys is None else _endpoint_keys(tenant_keys)
        if tenant_keys is not None:  # a key per tenant: one tenant's key can go with another's id
            self.request_channels = frozenset(ALL_CHANNELS) - (
                set() if self._forgeable_keys() else {"forged-token"}
            )

    def __repr__(self) -> str:
        auth = f", auth_header_env={self.auth_header_env!r}" if self.auth_header_env else ""
        return f"HttpRetriever(url={display_url(self.url)!r}{auth})"

    # -- credentials -------------------------------------------------------------------------------
    def _secret(self) -> str | None:
        """The credential, read now from the environment; ``None`` when no auth is configured."""
        if self.auth_header_env is None:
            return None
        value = os.environ.get(self.auth_header_env, "").strip()
        if not value:
            raise PermanentRetrievalError(
                f"environment variable {self.auth_header_env} is empty or not set; it must hold the credential "
                f"for the {self.auth_header} header"
            )
        return value

    def _credential(self, tenant_id: str) -> str | None:
        """The key of ``tenant_id`` from ``tenant_keys``, else the ``auth_header_env`` credential."""
        if self._tenant_keys is not None:
            key = self._tenant_keys.key_for(tenant_id)
            if key is not None or self.auth_header_env is None:
                return key
        return self._secret()

    def _forgeable_keys(self) -> bool:
        """Whether every per-tenant key is a JWT with a claim naming its tenant (``forged-token``)."""
        keys = self._tenant_keys
        return keys is not None and all(names_tenant(keys.key_for(t) or "", t) for t in keys.tenants())

    # -- connection pool ---------------------------------------------------------------------------
    def _connection(self) -> _ShardedClients:
        if self._clients is None or not self._clients.usable():
            httpx = _import_httpx()
            if self._tls is None:  # building one loads the CA bundle (tens of ms): once per retriever
                self._tls = httpx.create_ssl_context()
            self._clients = _ShardedClients(httpx, self._pool_size, self.timeout_s, self._headers, self._tls)
        return self._clients

    async def start_session(self, *, concurrency: int) -> None:
        """Called by the runner: check the credential is there and size the pool to ``concurrency``."""
        self._secret()
        await self.aclose()
        self._pool_size = self._max_connections or max(1, concurrency)

    async def end_session(self) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close pooled connections (a later search opens new ones)."""
        clients, self._clients = self._clients, None
        if clients is not None and clients.usable():
            await clients.aclose()

    async def __aenter__(self) -> HttpRetriever:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.aclose()

    # -- the protocol ------------------------------------------------------------------------------
    async def search(
        self, *, tenant_id: str, query: str, top_k: int, extras: RequestExtras | None = None
    ) -> list[RetrievedChunk]:
        """POST the query; return the service's chunks in its order, or raise a typed retrieval error.
        ``extras`` adds headers, query-string parameters and body fields (never the credential's header
        nor the three request fields, which stay as given); ``extras.credential_of`` sends that tenant's
        key (from ``tenant_keys``) instead of the key of ``tenant_id``."""
        wanted = extras.credential_of if extras is not None and extras.credential_of is not None else None
        secret = self._credential(tenant_id if wanted is None else wanted)
        if extras is not None and extras.forge is not None:
            secret = self._forged(secret, wanted or tenant_id, tenant_id, extras.forge)
        fields = self.request_fields
        headers: dict[str, str] = {}
        body: dict[str, Any] = {}
        if extras is not None:
            protected = {self.auth_header.lower()} if secret is not None else set()
            headers = {k: v for k, v in extras.headers.items() if k.lower() not in protected}
            body = {k: v for k, v in extras.body.items() if k not in fields.values()}
        if secret is not None:
            headers[self.auth_header] = f"{self.auth_scheme} {secret}" if self.auth_scheme else secret
        body.update({fields["tenant_id"]: tenant_id, fields["query"]: query, fields["top_k"]: top_k})
        if extras is not None and extras.tenant_value is not None:  # a JSON value instead of the id
            body[fields["tenant_id"]] = extras.tenant_value
        if extras is not None and extras.top_k_as_string:  # "10" instead of 10
            body[fields["top_k"]] = str(top_k)
        raw = None
        if extras is not None and extras.repeat_tenant is not None:  # the tenant field twice, by hand
            again = f"{json.dumps(fields['tenant_id'])}: {json.dumps(extras.repeat_tenant)}"
            raw = (json.dumps(body)[:-1] + f", {again}}}").encode()
        httpx = _import_httpx()
        scrub = redactor(secret)
        try:
            connection = self._connection()
            params = extras.params if extras is not None else None
            response = await connection.post(self.url, body, headers or None, params, raw)
            for _ in range(MAX_REDIRECTS):  # same origin, same method and body, as a client follows them
                target = same_origin_redirect(
                    self.url, response.status_code, response.headers.get("location")
                )
                if target is None:
                    break
                response = await connection.post(target, body, headers or None, None, raw)
        except httpx.TimeoutException as exc:
            raise TransientRetrievalError(
                f"no response within {self.timeout_s:g}s ({type(exc).__name__})"
            ) from None
        except (httpx.UnsupportedProtocol, httpx.InvalidURL, httpx.LocalProtocolError) as exc:
            raise PermanentRetrievalError(
                scrub.text(f"request failed: {type(exc).__name__}: {exc}")
            ) from None
        except httpx.TransportError as exc:
            detail = f": {exc}" if str(exc) else ""
            raise TransientRetrievalError(
                scrub.text(f"connection failed: {type(exc).__name__}{detail}")
            ) from None
        # Every form of the credential is cut out of the body before it is parsed or quoted, so no
        # chunk field and no excerpt can hold it, nor a piece of it split by a truncation; messages
        # are scrubbed once more.
        content = scrub.body(response.content)
        status = response.status_code
        headers = {k: scrub.text(v) for k, v in response_headers(response.headers).items()}
        error: RetrievalError
        if 200 <= status < 300:
            try:
                parsed = self.shape.parse(content, response.headers.get("content-type", ""))
            except PermanentRetrievalError as exc:
                error = PermanentRetrievalError(scrub.text(str(exc)))
            else:
                parsed.headers = headers
                return parsed
        else:
            excerpt = scrub.text(_excerpt(content))
            message = f"HTTP {status}" + (f": {excerpt}" if excerpt else "")
            if status in (408, 429) or status >= 500:
                error = TransientRetrievalError(
                    message, retry_after_s=_retry_after(response.headers.get("retry-after"))
                )
            else:
                error = PermanentRetrievalError(message + self._refusal_hint(status, wanted or tenant_id))
        error.response, error.headers = answered_body(content), headers  # a refusal can carry data too
        raise error

    @staticmethod
    def _forged(secret: str | None, caller: str, owner: str, how: str) -> str:
        """``caller``'s key forged for ``owner`` (:mod:`ragaudit.retrieval.forged_tokens`)."""
        forged = forge(secret or "", caller, owner, "alg-none" if how == "alg-none" else "claim-swap")
        if forged is None:
            raise PermanentRetrievalError(
                f"the key of tenant {caller!r} is no JWT with a claim naming it: nothing to forge"
            )
        return forged

    def _refusal_hint(self, status: int, key_tenant: str) -> str:
        """What to check after a refusal; with ``tenant_keys``, the tenant whose key went (or had none)."""
        keys = self._tenant_keys
        if status in (401, 403) and keys is not None:
            if keys.key_for(key_tenant) is not None:
                return f" (check the key of tenant {key_tenant!r} in {keys.path})"
            if self.auth_header_env is None:
                return f" (no key for tenant {key_tenant!r} in {keys.path}: add it under [tenants])"
        return _status_hint(status, self.auth_header_env)


def _endpoint_keys(path: str) -> EndpointKeys:
    from ragaudit.retrieval.endpoint_keys import EndpointKeys

    return EndpointKeys(path)
