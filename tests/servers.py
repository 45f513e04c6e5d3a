"""A small, real HTTP/1.1 server for the adapter tests and the runner benchmark.

It binds 127.0.0.1 on a free port, speaks keep-alive HTTP/1.1 over asyncio streams and runs on its
own event loop in a background thread (``with LocalServer(handler) as server: ...``), or in its own
process (``python tests/servers.py --delay-ms 50`` prints the port, then serves until killed).

``handler(request)`` returns a :class:`Reply`: a status, a body (bytes as they are, anything else as
JSON), an optional delay before answering, extra headers, or ``reset=True`` to drop the connection
without answering. ``request.attempt`` counts how often the same body has been seen (1 on the first
request), which makes "fail, then succeed" scenarios one line. Every request is kept in ``hits``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import Any


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    """Lower-cased header names."""
    body: bytes
    attempt: int

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    delay_s: float = 0.0
    reset: bool = False
    headers: dict[str, str] = field(default_factory=dict)

    def payload(self) -> bytes:
        return self.body if isinstance(self.body, bytes) else json.dumps(self.body).encode()


Handler = Callable[[Request], Reply]


class LocalServer:
    """Serve ``handler`` on 127.0.0.1 in a background thread; ``url`` is set once started."""

    def __init__(self, handler: Handler, path: str = "/search") -> None:
        self.handler = handler
        self.path = path
        self.hits: list[Request] = []
        self.port = 0
        self._seen: Counter[bytes] = Counter()
        self._lock = threading.Lock()
        self._ready = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread: threading.Thread | None = None
        self._connections: set[asyncio.Task[Any]] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}{self.path}"

    def queries(self) -> Counter[str]:
        """How many requests each query text received (from the ``query`` field of JSON bodies)."""
        with self._lock:
            bodies = [hit.body for hit in self.hits]
        out: Counter[str] = Counter()
        for body in bodies:
            try:
                data = json.loads(body)
            except ValueError:
                continue
            if isinstance(data, dict) and isinstance(data.get("query"), str):
                out[data["query"]] += 1
        return out

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        try:
            while True:
                start = await reader.readline()
                if not start.strip():
                    return
                method, target, _ = start.decode("latin-1").split(" ", 2)
                headers: dict[str, str] = {}
                while (line := await reader.readline()) not in (b"\r\n", b"\n", b""):
                    name, _, value = line.decode("latin-1").partition(":")
                    headers[name.strip().lower()] = value.strip()
                size = int(headers.get("content-length", "0"))
                body = await reader.readexactly(size) if size else b""
                with self._lock:
                    self._seen[body] += 1
                    request = Request(method, target, headers, body, self._seen[body])
                    self.hits.append(request)
                reply = self.handler(request)
                if reply.delay_s:
                    await asyncio.sleep(reply.delay_s)
                if reply.reset:
                    writer.transport.abort()
                    return
                payload = reply.payload()
                try:
                    reason = HTTPStatus(reply.status).phrase
                except ValueError:
                    reason = "Unknown"
                head = [f"HTTP/1.1 {reply.status} {reason}", f"Content-Length: {len(payload)}"]
                head += ["Content-Type: application/json"] if "content-type" not in reply.headers else []
                head += [f"{k}: {v}" for k, v in reply.headers.items()]
                writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload)
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            return
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0, backlog=512)
        self.port = server.sockets[0].getsockname()[1]
        self._ready.set()
        async with server:
            await self._stop.wait()
            server.close()
            for task in list(self._connections):
                task.cancel()
            await asyncio.gather(*self._connections, return_exceptions=True)

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        try:
            self._loop.run_until_complete(self._main())
        finally:
            self._loop.close()

    def start(self) -> LocalServer:
        self._thread = threading.Thread(target=self._run, name="ragaudit-test-server", daemon=True)
        self._thread.start()
        if not self._ready.wait(10):
            raise RuntimeError("test server did not start")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None and self._thread is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
            self._thread.join(10)

    def __enter__(self) -> LocalServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def chunk(chunk_id: str, tenant: str, score: float = 1.0) -> dict[str, Any]:
    """A chunk in the protocol's own field names."""
    return {
        "chunk_id": chunk_id,
        "score": score,
        "tenant_id": tenant,
        "content": f"text of {chunk_id}",
        "source_id": "s",
    }


def echo_handler(delay_s: float = 0.0) -> Handler:
    """Answers every query with two chunks of the caller's tenant, ids derived from the query."""

    def handle(request: Request) -> Reply:
        body = request.json()
        tenant, query = body["tenant_id"], body["query"]
        return Reply(
            body=[chunk(f"{query}#0", tenant, 2.0), chunk(f"{query}#1", tenant, 1.0)], delay_s=delay_s
        )

    return handle


def main() -> None:
    parser = argparse.ArgumentParser(description="serve the echo handler on 127.0.0.1 until killed")
    parser.add_argument("--delay-ms", type=float, default=0.0)
    args = parser.parse_args()
    server = LocalServer(echo_handler(args.delay_ms / 1000.0)).start()
    print(server.port, flush=True)
    try:
        sys.stdin.read()  # serve until the parent closes our stdin (or kills us)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
