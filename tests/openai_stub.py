"""A real local HTTP server speaking the OpenAI ``/v1/chat/completions`` API with scripted answers.

The one stand-in the test suite allows: it replaces a paid remote service, not a model or an index.
It runs stdlib ``http.server`` in a thread on ``127.0.0.1`` (port 0, so the OS picks a free port) and
records every request it receives (path, headers, JSON body) so tests can assert what was sent.

Answers come from ``script`` (consumed in order, one per request) and, once it is empty, from
``responder(request_body)``; with neither, the server answers 500. A :class:`Reply` can set the
status, a raw body (for malformed replies), headers (``Retry-After``), a delay before answering (to
trigger client timeouts) and ``echo_auth`` (an error message quoting the ``Authorization`` header, as
some careless servers do). A plain string is a 200 answer with that content.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any


@dataclass(frozen=True)
class Reply:
    """One scripted answer."""

    content: str | None = None
    status: int = 200
    body: str | dict[str, Any] | None = None
    """Sent as is instead of a completion / error object (a dict is JSON-encoded)."""
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    echo_auth: bool = False


@dataclass(frozen=True)
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def prompt(self) -> str:
        """All message contents of the request, joined (for matching on what was asked)."""
        return "\n".join(str(m.get("content", "")) for m in self.body.get("messages", []))


Responder = Callable[[dict[str, Any]], "Reply | str"]


def completion(content: str, model: str = "stub-model") -> dict[str, Any]:
    """A chat-completion body in OpenAI's shape."""
    return {
        "id": "chatcmpl-stub",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


class OpenAIStub:
    """``with OpenAIStub(["answer 1", Reply(status=500), ...]) as stub: ChatClient(stub.base_url, ...)``."""

    def __init__(self, script: Iterable[Reply | str] = (), responder: Responder | None = None) -> None:
        self._script: deque[Reply | str] = deque(script)
        self._responder = responder
        self._lock = threading.Lock()
        self.requests: list[Recorded] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler_class())
        self._server.daemon_threads = True
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="openai-stub", daemon=True
        )

    @property
    def base_url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def _next_reply(self, body: dict[str, Any]) -> Reply:
        with self._lock:
            scripted = self._script.popleft() if self._script else None
        reply: Reply | str
        if scripted is not None:
            reply = scripted
        elif self._responder is not None:
            reply = self._responder(body)
        else:
            reply = Reply(status=500, body={"error": {"message": "stub script exhausted"}})
        return Reply(content=reply) if isinstance(reply, str) else reply

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                return

            def _send(self, status: int, payload: str | dict[str, Any], headers: dict[str, str]) -> None:
                data = (payload if isinstance(payload, str) else json.dumps(payload)).encode("utf-8")
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in headers.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
                    return

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                raw = self.rfile.read(length)
                try:
                    body = json.loads(raw)
                except ValueError:
                    body = {"_unparsable": raw.decode("utf-8", "replace")}
                with stub._lock:
                    stub.requests.append(Recorded(self.path, dict(self.headers.items()), body))
                if self.path.rstrip("/") != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}}, {})
                    return
                reply = stub._next_reply(body)
                if reply.delay_s:
                    time.sleep(reply.delay_s)
                if reply.body is not None:
                    self._send(reply.status, reply.body, reply.headers)
                elif reply.status == 200:
                    self._send(
                        200, completion(reply.content or "", str(body.get("model", ""))), reply.headers
                    )
                else:
                    message = f"scripted HTTP {reply.status}"
                    if reply.echo_auth:
                        message += f"; you sent Authorization: {self.headers.get('Authorization')}"
                    self._send(reply.status, {"error": {"message": message, "type": "stub"}}, reply.headers)

        return Handler

    def __enter__(self) -> OpenAIStub:
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
