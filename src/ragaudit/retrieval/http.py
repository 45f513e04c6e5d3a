"""Query a live retrieval service over HTTP (needs the ``http`` extra: httpx).

Request: ``POST url`` with the JSON body ``{"tenant_id": ..., "query": ..., "top_k": ...}``; the three
names can be changed with ``request_fields`` (e.g. ``{"query": "q", "top_k": "k"}``).
``search(..., extras=RequestExtras(...))`` adds headers, query-string parameters and body fields to one
request (:mod:`ragaudit.retrieval.request_extras`; the tenant audit's request mutations use it).

Response: a JSON list of chunk objects, or an object holding that list under ``results_path`` (a
dotted path such as ``"data.hits"``; by default the top-level list, or the object's ``results`` key),
or newline-delimited JSON (``application/x-ndjson``, JSON Lines: one chunk object per line).
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

Failures (:mod:`ragaudit.errors`): timeouts, connection failures and HTTP 408/429/5xx are
transient (the runner retries them, honouring ``Retry-After``); other non-2xx statuses, bodies that
are not JSON and chunks of the wrong shape are permanent, with a message naming the field and what
was expected.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import os
import ssl
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import urlsplit, urlunsplit

from ragaudit.errors import (
    InputError,
    MissingDependencyError,
    PermanentRetrievalError,
    RetrievalError,
    TransientRetrievalError,
)
from ragaudit.redaction import MARKER, redactor
from ragaudit.retrieval.protocol import RetrievedChunk, RetrievedList
from ragaudit.retrieval.request_extras import ALL_CHANNELS, CHANNELS, Channel, RequestExtras

if TYPE_CHECKING:
    import httpx

    from ragaudit.retrieval.endpoint_keys import EndpointKeys

CHUNK_FIELDS = ("chunk_id", "score", "content", "source_id", "tenant_id", "metadata")
REQUEST_FIELDS = ("tenant_id", "query", "top_k")
REDACTED = MARKER
_EXCERPT_CHARS = 200
_DEFAULT_POOL = 16
_SHARD_CONNECTIONS = 8


def _import_httpx() -> ModuleType:
    try:
        import httpx
    except ImportError:
        raise MissingDependencyError("httpx", "http") from None
    return httpx


def _json_type(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def _path(text: str, what: str) -> tuple[str, ...]:
    parts = tuple(text.split("."))
    if not text or any(not part for part in parts):
        raise InputError(
            "http retriever",
            None,
            f"{what} {text!r} is not a field name or dotted path",
            "e.g. 'id' or 'meta.tenant'",
        )
    return parts


def _lookup(obj: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    for key in path:
        if not isinstance(obj, dict) or key not in obj:
            return False, None
        obj = obj[key]
    return True, obj


@dataclass(frozen=True)
class ResponseShape:
    """Where the chunk list is in a response and where each chunk field is in a chunk object."""

    results_path: tuple[str, ...] | None
    fields: Mapping[str, tuple[str, ...]]

    @classmethod
    def build(cls, field_map: Mapping[str, str] | None, results_path: str | None) -> ResponseShape:
        given = dict(field_map or {})
        unknown = sorted(set(given) - set(CHUNK_FIELDS))
        if unknown:
            raise InputError(
                "http retriever",
                None,
                f"unknown field_map key(s): {', '.join(unknown)}",
                f"map only these chunk fields: {', '.join(CHUNK_FIELDS)}",
            )
        fields = {name: _path(given.get(name, name), f"field_map[{name!r}]") for name in CHUNK_FIELDS}
        return cls(_path(results_path, "results_path") if results_path is not None else None, fields)

    def chunk_list(self, data: Any) -> list[Any]:
        if self.results_path is not None:
            found, value = _lookup(data, self.results_path)
            where = ".".join(self.results_path)
            if not found:
                keys = ", ".join(sorted(data)) if isinstance(data, dict) else _json_type(data)
                raise PermanentRetrievalError(
                    f"response has no {where!r} (it has: {keys}); check results_path"
                )
            if not isinstance(value, list):
                raise PermanentRetrievalError(
                    f"response field {where!r} must be an array of chunks, got {_json_type(value)}"
                )
            return value
        if isinstance(data, list):
            return data
        if isinstance(data, dict) and isinstance(data.get("results"), list):
            return cast(list[Any], data["results"])
        keys = (
            f"an object with keys {', '.join(sorted(data))}" if isinstance(data, dict) else _json_type(data)
        )
        raise PermanentRetrievalError(
            f"response must be an array of chunks or an object with a 'results' array, got {keys}; set results_path"
        )

    def _name(self, field: str) -> str:
        service = ".".join(self.fields[field])
        return repr(service) if service == field else f"{service!r} (mapped to {field})"

    def chunk(self, position: int, raw: Any) -> RetrievedChunk:
        """One chunk in the protocol's shape, or a :class:`PermanentRetrievalError` naming the bad field."""
        if not isinstance(raw, dict):
            raise PermanentRetrievalError(f"result #{position} must be an object, got {_json_type(raw)}")
        out: dict[str, Any] = {}
        found, chunk_id = _lookup(raw, self.fields["chunk_id"])
        if not found:
            raise PermanentRetrievalError(
                f"result #{position} has no field {self._name('chunk_id')} (its fields: {', '.join(sorted(raw))}); "
                "set field_map['chunk_id']"
            )
        if isinstance(chunk_id, int) and not isinstance(chunk_id, bool):
            chunk_id = str(chunk_id)
        if not isinstance(chunk_id, str) or not chunk_id:
            raise PermanentRetrievalError(
                f"result #{position}: field {self._name('chunk_id')} must be a non-empty string, got {_json_type(chunk_id)}"
            )
        out["chunk_id"] = chunk_id
        for field in CHUNK_FIELDS[1:]:
            found, value = _lookup(raw, self.fields[field])
            if not found or value is None:
                continue
            if field == "score":
                ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
                expected = "a finite number"
                value = float(value) if ok else value
            elif field == "metadata":
                ok, expected = isinstance(value, dict), "an object"
            else:
                ok, expected = isinstance(value, str), "a string"
            if not ok:
                raise PermanentRetrievalError(
                    f"result #{position} ({chunk_id!r}): field {self._name(field)} must be {expected}, got {_json_type(value)}"
                )
            out[field] = value
        extra = _unmapped(raw, tuple(self.fields.values()))
        if extra:
            out["extra"] = extra
        return cast(RetrievedChunk, out)

    def parse(self, body: bytes, content_type: str = "") -> RetrievedList:
        """The chunks in a response body, in ranking order: a JSON document, or newline-delimited JSON
        (NDJSON, JSON Lines: one chunk object per line, as a streaming service sends them; so read
        whenever the content type says so or the body holds several JSON values)."""
        try:
            data = _load_json(body, lines=_is_json_lines(content_type))
        except RecursionError:
            raise PermanentRetrievalError(
                f"response JSON is nested too deeply to read; it starts with {_excerpt(body)!r}"
            ) from None
        except (ValueError, UnicodeDecodeError) as exc:
            detail = (
                f"{exc.msg} at line {exc.lineno} column {exc.colno}"
                if isinstance(exc, json.JSONDecodeError)
                else str(exc)
            )
            raise PermanentRetrievalError(
                f"response is not valid JSON ({detail}); it starts with {_excerpt(body)!r}"
            ) from None
        chunks = [self.chunk(position, raw) for position, raw in enumerate(self.chunk_list(data), start=1)]
        return RetrievedList(chunks, data, self.items_path(data))

    def items_path(self, data: Any) -> str:
        """The JSON path of the chunk list in a response: ``$.data.hits``, ``$.results`` or ``$``."""
        if self.results_path is not None:
            return "$." + ".".join(self.results_path)
        return "$" if isinstance(data, list) else "$.results"


def _unmapped(raw: Mapping[str, Any], paths: tuple[tuple[str, ...], ...]) -> dict[str, Any]:
    """``raw`` without the values the mapped ``paths`` took (objects left empty go too): what ``extra`` keeps."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        inner = tuple(path[1:] for path in paths if path[0] == key)
        if not inner:
            out[key] = value
        elif all(inner) and isinstance(value, dict):
            rest = _unmapped(value, inner)
            if rest:
                out[key] = rest
    return out


def _is_json_lines(content_type: str) -> bool:
    """Whether a content type names newline-delimited JSON (``application/x-ndjson``, ``jsonl``, ``json-seq``)."""
    kind = content_type.split(";")[0].strip().lower()
    return any(name in kind for name in ("ndjson", "jsonl", "json-seq", "jsonlines"))


def _json_rows(body: bytes) -> list[Any]:
    """Every line of ``body`` that is not blank, as JSON (a JSON text sequence's RS characters dropped)."""
    lines = [line.strip(b"\x1e \t\r") for line in body.splitlines()]
    return [json.loads(line, parse_constant=_reject_constant) for line in lines if line]


def _load_json(body: bytes, *, lines: bool = False) -> Any:
    """``body`` as JSON; newline-delimited JSON (``lines``, or a body of several JSON objects, one per
    line) as the list of its rows."""
    if lines:
        return _json_rows(body)
    try:
        return json.loads(body, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        if exc.msg != "Extra data":
            raise
        try:
            rows = _json_rows(body)
        except (ValueError, UnicodeDecodeError):
            raise exc from None
        if not all(isinstance(row, dict) for row in rows):
            raise
        return rows


_PLAIN_HEADERS = frozenset(
    {
        "content-length",
        "content-type",
        "content-encoding",
        "transfer-encoding",
        "connection",
        "keep-alive",
        "date",
    }
)
"""Response headers that carry no data of the service's (the rest are kept for the tenant checks)."""


def response_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """The headers of a response that may carry data (a debug or trace header), lower-cased names."""
    return {k.lower(): v for k, v in headers.items() if k.lower() not in _PLAIN_HEADERS}


def answered_body(content: bytes) -> Any:
    """What a service answered, to read for other tenants' data even when it is no ranking (an error's
    body, a 200 of the wrong shape): parsed JSON, else the text (at most 64 KiB)."""
    try:
        return _load_json(content[:65536])
    except (ValueError, RecursionError, UnicodeDecodeError):
        return content[:65536].decode("utf-8", "replace")


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _excerpt(body: bytes) -> str:
    text = " ".join(body[: _EXCERPT_CHARS * 4].decode("utf-8", "replace").split())
    return text[:_EXCERPT_CHARS] + ("..." if len(text) > _EXCERPT_CHARS else "")


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def display_url(url: str) -> str:
    """``url`` without user info, query string or fragment (where credentials tend to hide)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def endpoint_name(url: str) -> str:
    """A service's name in reports and the run history: host, port and path of ``url``
    (``localhost:8000/search``), so two services never share a name; no scheme, user info or query."""
    display = display_url(url)
    return display.split("://", 1)[-1].rstrip("/") or "endpoint"


class _ShardedClients:
    """A connection pool of ``size`` connections made of httpx clients of at most 8 connections each.

    Each request goes to the least busy client. Why not one client: httpcore 1.0's pool bookkeeping
    walks every connection for every connection on each request (O(size²)); at 64 connections that
    costs more CPU than the request itself, and throughput stops growing with concurrency. Shards of
    8 keep it negligible. The clients share one TLS context, and belong to the event loop they were
    made in.
    """

    def __init__(
        self, lib: ModuleType, size: int, timeout_s: float, headers: Mapping[str, str], tls: ssl.SSLContext
    ) -> None:
        shards = max(1, math.ceil(size / _SHARD_CONNECTIONS))
        per_shard = math.ceil(size / shards)
        self.loop = asyncio.get_running_loop()
        self.lib = lib
        self.clients: list[httpx.AsyncClient] = [
            lib.AsyncClient(
                timeout=lib.Timeout(timeout_s),
                limits=lib.Limits(max_connections=per_shard, max_keepalive_connections=per_shard),
                headers=dict(headers),
                verify=tls,
                follow_redirects=False,
            )
            for _ in range(shards)
        ]
        self.busy = [0] * shards

    def usable(self) -> bool:
        return self.loop is asyncio.get_running_loop() and not self.loop.is_closed()

    async def post(
        self,
        url: str,
        body: Mapping[str, Any],
        headers: Mapping[str, str] | None,
        params: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        shard = self.busy.index(min(self.busy))
        self.busy[shard] += 1
        try:
            # merged into the URL's own query string (httpx's params= would replace it)
            target = self.lib.URL(url).copy_merge_params(dict(params)) if params else url
            response: httpx.Response = await self.clients[shard].post(target, json=body, headers=headers)
            return response
        finally:
            self.busy[shard] -= 1

    async def aclose(self) -> None:
        for client in self.clients:
            await client.aclose()


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
            self.request_channels = frozenset(ALL_CHANNELS)

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
        httpx = _import_httpx()
        scrub = redactor(secret)
        try:
            response = await self._connection().post(
                self.url, body, headers or None, extras.params if extras is not None else None
            )
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


def _status_hint(status: int, auth_env: str | None) -> str:
    if status == 403 and auth_env:
        return (
            f" (refused with the credential in ${auth_env}: a key bound to one tenant cannot ask as "
            "another; give one key per tenant with --endpoint-keys)"
        )
    if status in (401, 403):
        return (
            f" (check the credential in ${auth_env})"
            if auth_env
            else " (the service wants credentials: set auth_header_env; on the CLI --auth-env or --endpoint-keys)"
        )
    if status in (404, 405):
        return " (check the URL and that the endpoint accepts POST)"
    if 300 <= status < 400:
        return " (a redirect: use the final URL)"
    if status in (400, 422):
        return " (the service rejected the request body: check request_fields)"
    return ""
