"""The HTTP service of ``ragaudit serve``: Starlette on uvicorn (the ``serve`` extra).

``POST /search`` takes ``{"query": str, "top_k": int}`` (``top_k`` defaults to 10) and answers
``{"results": [{chunk_id, score, content, source_id, tenant_id, metadata}]}``, best first: exactly
what ``--endpoint`` reads with no ``--field`` flags.

The tenant is the one the API key is bound to (``Authorization: Bearer KEY`` or ``X-API-Key: KEY``),
never one the request names. A request that names a tenant anyway (body ``tenant_id`` / ``tenant`` /
``tenantId``, header ``X-Tenant`` / ``X-Tenant-Id``, query string ``tenant`` / ``tenant_id``) is
served only when every such value equals the key's tenant; any other value is refused with 403.
A missing or unknown key is 401. Order of checks: body size (413), key (401), tenant named in
headers or query string (403), JSON body (400), tenant named in the body (403), ``query`` and
``top_k`` (422). Every refusal is a JSON ``{"error": ...}``; an unexpected failure is a JSON 500
without a traceback; a search that takes longer than the timeout is a 504.

``GET /healthz``: ``{"status": "ok", pipeline, documents, chunks, index}`` (no tenant names; ``index``:
``loaded`` / ``built`` / ``not-persisted`` with ``--index-dir``, absent without).
``GET /metrics``: Prometheus text (:mod:`ragaudit.serving.metrics`).
"""

from __future__ import annotations

import asyncio
import json
import math
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ragaudit.errors import MissingDependencyError
from ragaudit.serving.engine import ServeEngine
from ragaudit.serving.keys import ServerKeys
from ragaudit.serving.metrics import CONTENT_TYPE, ServeMetrics

if TYPE_CHECKING:
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import Response

BODY_TENANT_FIELDS = ("tenant_id", "tenant", "tenantId")
HEADER_TENANT_FIELDS = ("x-tenant", "x-tenant-id")
QUERY_TENANT_FIELDS = ("tenant", "tenant_id")
DEFAULT_TOP_K = 10


@dataclass(frozen=True)
class Limits:
    """Input limits of ``POST /search`` (each a CLI flag of ``ragaudit serve``)."""

    max_query_chars: int = 2000
    max_top_k: int = 100
    max_body_bytes: int = 65_536
    timeout_s: float = 10.0


class Refused(Exception):
    """A request answered with a 4xx: ``status``, the message, and the metrics reason."""

    def __init__(self, status: int, message: str, reason: str) -> None:
        super().__init__(message)
        self.status = status
        self.reason = reason


def require_server_libraries() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise MissingDependencyError("starlette and uvicorn", "serve") from None


def presented_key(request: Request) -> str | None:
    """The API key the request carries (``Authorization: Bearer``, else ``X-API-Key``), or None."""
    auth = request.headers.get("authorization")
    if auth is not None:
        scheme, _, value = auth.strip().partition(" ")
        return value.strip() if scheme.lower() == "bearer" and value.strip() else None
    key = request.headers.get("x-api-key")
    return key.strip() if key and key.strip() else None


def _named_tenants_outside_body(request: Request) -> Iterator[tuple[str, object]]:
    for name in HEADER_TENANT_FIELDS:
        for value in request.headers.getlist(name):
            yield f"header {name}", value
    for name, value in request.query_params.multi_items():
        if name in QUERY_TENANT_FIELDS:
            yield f"query parameter {name}", value


def check_named_tenants(tenant: str, named: Iterator[tuple[str, object]]) -> None:
    """Refuse (403) when any tenant the request names is not exactly the key's tenant."""
    for where, value in named:
        if value != tenant:
            raise Refused(403, f"the {where} names a tenant this API key is not bound to", "tenant-mismatch")


async def read_body(request: Request, limit: int) -> bytes:
    """The body, read in pieces and refused (413) as soon as it passes ``limit`` bytes."""
    declared = request.headers.get("content-length")
    if declared is not None and (not declared.isdigit() or int(declared) > limit):
        raise Refused(413, f"the body must be at most {limit} bytes", "too-large")
    body = bytearray()
    async for piece in request.stream():
        body += piece
        if len(body) > limit:
            raise Refused(413, f"the body must be at most {limit} bytes", "too-large")
    return bytes(body)


def parse_search(body: bytes, tenant: str, limits: Limits) -> tuple[str, int]:
    """``(query, top_k)`` of a search body; 400 for a body that is not a JSON object, 403 for another
    tenant named in it, 422 for a bad ``query`` or ``top_k``."""
    try:
        data = json.loads(body or b"null", parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        raise Refused(400, "the body must be a JSON object", "bad-request") from None
    if not isinstance(data, dict):
        raise Refused(400, 'the body must be a JSON object: {"query": "...", "top_k": 10}', "bad-request")
    check_named_tenants(tenant, ((f"body field {k}", data[k]) for k in BODY_TENANT_FIELDS if k in data))
    query = data.get("query")
    if not isinstance(query, str) or not query.strip():
        raise Refused(422, "query must be a non-empty string", "bad-request")
    if len(query) > limits.max_query_chars:
        raise Refused(422, f"query must be at most {limits.max_query_chars} characters", "bad-request")
    top_k = data.get("top_k", DEFAULT_TOP_K)
    if isinstance(top_k, float) and top_k.is_integer():
        top_k = int(top_k)
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= limits.max_top_k:
        raise Refused(422, f"top_k must be an integer from 1 to {limits.max_top_k}", "bad-request")
    return query, top_k


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _finite(chunks: list[Any]) -> list[Any]:
    for chunk in chunks:
        score = chunk.get("score")
        if isinstance(score, float) and not math.isfinite(score):
            raise ValueError("a retriever returned a non-finite score")
    return chunks


def create_app(engine: ServeEngine, keys: ServerKeys, limits: Limits, metrics: ServeMetrics) -> Starlette:
    """The ASGI app serving ``engine`` to the holders of ``keys``."""
    require_server_libraries()
    from starlette.applications import Starlette
    from starlette.exceptions import HTTPException
    from starlette.responses import JSONResponse, Response
    from starlette.routing import Route

    no_store = {"Cache-Control": "no-store"}

    def refusal(status: int, message: str) -> Response:
        headers = dict(no_store)
        if status == 401:
            headers["WWW-Authenticate"] = 'Bearer realm="ragaudit"'
        return JSONResponse({"error": message}, status, headers=headers)

    async def search(request: Request) -> Response:
        started = time.perf_counter()
        tenant: str | None = None
        try:
            body = await read_body(request, limits.max_body_bytes)
            key = presented_key(request)
            tenant = keys.tenant_of(key) if key is not None else None
            if tenant is None:
                raise Refused(
                    401, "a valid API key is required (Authorization: Bearer KEY)", "unauthenticated"
                )
            check_named_tenants(tenant, _named_tenants_outside_body(request))
            query, top_k = parse_search(body, tenant, limits)
            try:
                found = await asyncio.wait_for(engine.search(tenant, query, top_k), limits.timeout_s)
            except asyncio.TimeoutError:
                raise Refused(504, f"the search took longer than {limits.timeout_s:g} s", "timeout") from None
            response = JSONResponse({"results": _finite(found)}, headers=no_store)
            metrics.observe(tenant, 200, time.perf_counter() - started, len(found))
            return response
        except Refused as exc:
            metrics.error(tenant, exc.reason)
            metrics.observe(tenant, exc.status, time.perf_counter() - started)
            return refusal(exc.status, str(exc))
        except Exception:  # never a traceback on the wire; the metrics count it
            metrics.error(tenant, "internal")
            metrics.observe(tenant, 500, time.perf_counter() - started)
            return JSONResponse({"error": "internal error"}, 500, headers=no_store)

    async def healthz(request: Request) -> Response:
        shown = ("pipeline", "documents", "chunks", "index")
        info = {k: engine.info[k] for k in shown if k in engine.info}
        return JSONResponse({"status": "ok", **info}, headers=no_store)

    async def metrics_page(request: Request) -> Response:
        return Response(metrics.text(), media_type=CONTENT_TYPE, headers=no_store)

    async def http_error(request: Request, exc: Exception) -> Response:
        status = exc.status_code if isinstance(exc, HTTPException) else 500
        message = {404: "not found", 405: "method not allowed"}.get(status, "request refused")
        return JSONResponse({"error": message}, status, headers=no_store)

    routes = [
        Route("/search", search, methods=["POST"]),
        Route("/healthz", healthz, methods=["GET"]),
        Route("/metrics", metrics_page, methods=["GET"]),
    ]
    return Starlette(routes=routes, exception_handlers={HTTPException: http_error, Exception: http_error})


def bind(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port`` (``port`` 0: a free one).

    Made with ``IPPROTO_TCP`` named: asyncio sets ``TCP_NODELAY`` only on connections whose socket says
    so, and without it a response written as headers then body waits for the client's delayed ACK
    (~40 ms per request on Linux)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(1024)
    sock.set_inheritable(True)
    return sock


def run_server(app: Starlette, sock: socket.socket, *, max_connections: int = 1024) -> None:
    """Serve ``app`` on ``sock`` until interrupted (Ctrl-C or SIGTERM stop it cleanly).

    uvicorn's access log is off (nothing about a request, its headers or its key is logged);
    connections past ``max_connections`` are answered 503.
    """
    require_server_libraries()
    import uvicorn

    config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,
        lifespan="off",
        limit_concurrency=max_connections,
        timeout_keep_alive=15,
        server_header=False,
    )
    uvicorn.Server(config).run(sockets=[sock])
