"""A stand-in for your retrieval service, to try ``ragaudit eval --endpoint`` from the README.

    python examples/search_service.py start      # serve on localhost:8000 in the background
    python examples/search_service.py stop
    python examples/search_service.py serve      # in the foreground (Ctrl-C stops it)

``POST /search`` with ``{"tenant_id", "query", "top_k"}`` answers ``{"hits": [{"id", "score",
"tenant_id", "text"}]}``: BM25 over the bundled demo knowledge base, filtered to the tenant. Its field
names differ from ragaudit's on purpose (``--results-field hits --field chunk_id=id``). When
``SEARCH_TOKEN`` is set in its environment, requests must carry ``Authorization: Bearer <token>``.
``--port`` (default 8000) picks the port; the pid is kept in ``.ragaudit/search_service.pid``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

HERE = Path(__file__).resolve().parent
PIDFILE = Path(".ragaudit") / "search_service.pid"


def _retriever():  # type: ignore[no-untyped-def]
    from ragaudit.pipelines.sources import SourceSpec, open_source

    return open_source(
        SourceSpec(pipeline="bm25"), corpus=str(HERE / "data" / "kb" / "corpus.jsonl")
    ).retriever


def serve(port: int) -> None:
    retriever = _retriever()
    token = os.environ.get("SEARCH_TOKEN")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            if token and self.headers.get("Authorization") != f"Bearer {token}":
                return self._reply(401, {"error": "unauthorized"})
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            found = asyncio.run(  # one event loop per request: each runs in its own thread
                retriever.search(tenant_id=body["tenant_id"], query=body["query"], top_k=int(body["top_k"]))
            )
            hits = [
                {
                    "id": c["chunk_id"],
                    "score": c["score"],
                    "tenant_id": c.get("tenant_id"),
                    "text": c["content"],
                }
                for c in found
            ]
            return self._reply(200, {"hits": hits})

        def _reply(self, status: int, payload: object) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        return probe.connect_ex(("127.0.0.1", port)) == 0


def start(port: int) -> int:
    if _listening(port):
        print(f"port {port} is already in use (a service already runs there? stop it first)", file=sys.stderr)
        return 1
    child = subprocess.Popen(
        [sys.executable, __file__, "serve", "--port", str(port)],
        start_new_session=True,
        env=os.environ.copy(),
    )
    deadline = time.monotonic() + 60
    while not _listening(port):
        if child.poll() is not None or time.monotonic() > deadline:
            print("the service did not start", file=sys.stderr)
            return 1
        time.sleep(0.1)
    PIDFILE.parent.mkdir(parents=True, exist_ok=True)
    PIDFILE.write_text(str(child.pid))
    print(
        f"serving http://localhost:{port}/search (pid {child.pid}); stop it with: python {sys.argv[0]} stop"
    )
    return 0


def stop() -> int:
    if not PIDFILE.is_file():
        print("no service started from this folder", file=sys.stderr)
        return 1
    pid = int(PIDFILE.read_text())
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    PIDFILE.unlink()
    print(f"stopped the service (pid {pid})")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("action", choices=["start", "stop", "serve"])
    parser.add_argument("--port", type=int, default=8000)
    args = parser.parse_args()
    if args.action == "serve":
        serve(args.port)
        return 0
    return start(args.port) if args.action == "start" else stop()


if __name__ == "__main__":
    sys.exit(main())
