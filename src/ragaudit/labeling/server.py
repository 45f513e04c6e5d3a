"""The workbench's HTTP server: Starlette on uvicorn, bound to 127.0.0.1, guarded by a session token.

Every request needs the session's token (``?token=`` on the page's URL, the ``X-Ragaudit-Token`` header
on API calls; compared in constant time): without it the answer is 403. The ``Host`` header must name
127.0.0.1 or localhost (no DNS-rebinding from a web page). The page carries its script inline under a
per-response nonce with a Content-Security-Policy that allows nothing else (no network, no frames).

API (JSON): ``GET /api/pool`` (the pool, loaded once), ``GET /api/state`` (labels in effect),
``POST /api/judge`` ``{case_id, chunk_id, grade, superseded}``, ``POST /api/span`` ``{case_id, chunk_id,
start, end}``, ``POST /api/unanswerable`` ``{case_id, value}``, ``POST /api/undo``. A mutation is answered
only after its event is fsynced; a refused one gets 400 and the reason.

Needs the ``label`` extra (``pip install 'ragaudit[label]'``): starlette and uvicorn, imported lazily.
"""

from __future__ import annotations

import hmac
import json
import secrets
import socket
from collections.abc import Awaitable, Callable
from importlib import resources
from typing import TYPE_CHECKING, Any

from ragaudit.errors import BadAction, MissingDependencyError
from ragaudit.labeling.session import LabelSession

if TYPE_CHECKING:
    from starlette.applications import Starlette

TOKEN_HEADER = "X-Ragaudit-Token"
LOOPBACK = "127.0.0.1"


def require_server_libraries() -> None:
    try:
        import starlette  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        raise MissingDependencyError("starlette and uvicorn", "label") from None


def page_html() -> str:
    return resources.files("ragaudit.labeling").joinpath("workbench.html").read_text(encoding="utf-8")


def create_app(session: LabelSession, token: str) -> Starlette:
    """The ASGI app of one labeling session."""
    require_server_libraries()
    from starlette.applications import Starlette
    from starlette.middleware import Middleware
    from starlette.middleware.trustedhost import TrustedHostMiddleware
    from starlette.requests import Request
    from starlette.responses import HTMLResponse, JSONResponse, Response
    from starlette.routing import Route

    template = page_html()

    def authorised(request: Request) -> bool:
        given = request.headers.get(TOKEN_HEADER) or request.query_params.get("token") or ""
        return hmac.compare_digest(given.encode(), token.encode())

    def guarded(
        handler: Callable[[Request], Awaitable[Response]],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def wrapped(request: Request) -> Response:
            if not authorised(request):
                return JSONResponse({"error": "forbidden: the session token is missing or wrong"}, 403)
            return await handler(request)

        return wrapped

    async def page(request: Request) -> Response:
        nonce = secrets.token_urlsafe(16)
        csp = (
            f"default-src 'none'; script-src 'nonce-{nonce}'; style-src 'nonce-{nonce}'; "
            "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
        )
        headers = {
            "Content-Security-Policy": csp,
            "Referrer-Policy": "no-referrer",
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "no-store",
        }
        return HTMLResponse(template.replace("__NONCE__", nonce), headers=headers)

    async def pool(request: Request) -> Response:
        return Response(
            session.pool_payload(), media_type="application/json", headers={"Cache-Control": "no-store"}
        )

    async def state(request: Request) -> Response:
        return JSONResponse(session.state_payload(), headers={"Cache-Control": "no-store"})

    def action(do: Callable[[dict[str, Any]], dict[str, Any]]) -> Callable[[Request], Awaitable[Response]]:
        async def handler(request: Request) -> Response:
            try:
                body = json.loads(await request.body() or b"{}")
            except ValueError:
                return JSONResponse({"error": "the body must be JSON"}, 400)
            if not isinstance(body, dict):
                return JSONResponse({"error": "the body must be a JSON object"}, 400)
            try:
                return JSONResponse(do(body))
            except BadAction as exc:
                return JSONResponse({"error": str(exc)}, 400)

        return handler

    routes = [
        Route("/", guarded(page)),
        Route("/api/pool", guarded(pool)),
        Route("/api/state", guarded(state)),
        Route("/api/judge", guarded(action(session.judge)), methods=["POST"]),
        Route("/api/span", guarded(action(session.span)), methods=["POST"]),
        Route("/api/unanswerable", guarded(action(session.unanswerable)), methods=["POST"]),
        Route("/api/undo", guarded(action(lambda _body: session.undo())), methods=["POST"]),
    ]
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=[LOOPBACK, "localhost"])]
    return Starlette(routes=routes, middleware=middleware)


def bind_loopback(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1 (``port`` 0: a free one). Made with ``IPPROTO_TCP`` named, so asyncio
    sets ``TCP_NODELAY`` on its connections (else each response waits ~40 ms for a delayed ACK; found by
    ``bench/serve_load.py`` on ``ragaudit serve``'s socket, which was made the same way)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((LOOPBACK, port))
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve(session: LabelSession, sock: socket.socket, token: str) -> None:
    """Serve the session on ``sock`` until interrupted (Ctrl-C stops it cleanly)."""
    require_server_libraries()
    import uvicorn

    config = uvicorn.Config(create_app(session, token), log_level="warning", access_log=False, lifespan="off")
    uvicorn.Server(config).run(sockets=[sock])
