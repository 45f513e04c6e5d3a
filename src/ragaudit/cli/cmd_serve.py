"""``ragaudit serve``: a pipeline behind HTTP, the tenant bound to the API key (docs/serve.md).

``ragaudit serve --pipeline bm25 --corpus corpus.jsonl --keys keys.toml [--host 127.0.0.1 --port 8000]``
builds the pipeline in process over the corpus's active documents and serves ``POST /search``,
``GET /healthz`` and ``GET /metrics`` until Ctrl-C. ``--hash-key`` reads a key on stdin and prints the
line the keys file stores; ``--new-key TENANT`` makes a key and prints both.
"""

from __future__ import annotations

import argparse
import errno
import json
import socket
import sys
from collections.abc import Callable
from pathlib import Path
from typing import NoReturn

from ragaudit.cli.argtypes import input_file, positive_float, positive_int

WATCHED = False
"""A server: no "still running" lines (``ragaudit.cli.console.watching``)."""
HELP = "serve a pipeline over HTTP for your generator: POST /search, tenant bound to the API key"

EXAMPLES = """\
ragaudit serve --new-key acme >> keys.toml
ragaudit serve --pipeline bm25 --corpus corpus.jsonl --keys keys.toml --port 8000
ragaudit serve --pipeline dense --corpus corpus.jsonl --keys keys.toml --min-score 0.3
ragaudit serve --pipeline hybrid-rerank:fusion.json --corpus corpus.jsonl --keys keys.toml --index-dir /var/lib/ragaudit
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--pipeline", help="a preset (bm25, dense, hybrid, hybrid-rerank:MODEL.json) or a TOML"
    )
    parser.add_argument("--corpus", type=input_file, help="the corpus to serve (ragaudit JSONL or BEIR)")
    parser.add_argument("--keys", type=input_file, help="keys file: [[key]] tenant = ..., sha256 = ...")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: a free one)")
    parser.add_argument(
        "--serve-superseded", action="store_true", help="also index documents marked status: superseded"
    )
    parser.add_argument(
        "--min-score", type=float, help="drop chunks scoring below this (the pipeline's scale)"
    )
    parser.add_argument("--qdrant-url", help="use this Qdrant server as the dense store of --pipeline")
    parser.add_argument(
        "--index-dir",
        help="where indexes are saved and reloaded at start, keyed by their inputs "
        "(default: $RAGAUDIT_CACHE_DIR/serve-indexes, else ./.ragaudit/cache/serve-indexes)",
    )
    parser.add_argument(
        "--no-index-dir", action="store_true", help="build the index in memory at every start (save nothing)"
    )
    limits = parser.add_argument_group("limits")
    limits.add_argument("--max-query-chars", type=positive_int, default=2000, help="default 2000")
    limits.add_argument("--max-top-k", type=positive_int, default=100, help="largest top_k (default 100)")
    limits.add_argument("--max-body-bytes", type=positive_int, default=65_536, help="default 65536")
    limits.add_argument(
        "--request-timeout", type=positive_float, default=10.0, help="seconds per search (default 10)"
    )
    limits.add_argument(
        "--max-connections", type=positive_int, default=1024, help="more are answered 503 (default 1024)"
    )
    keys = parser.add_argument_group("keys")
    keys.add_argument(
        "--hash-key", action="store_true", help="read a key on stdin, print its sha256 for the keys file"
    )
    keys.add_argument(
        "--new-key", metavar="TENANT", help="make a random key for TENANT; print it and its entry"
    )


def _usage(where: str, message: str, fix: str) -> NoReturn:
    from ragaudit.errors import InputError

    raise InputError(where, None, message, fix)


def run(args: argparse.Namespace) -> int:
    if args.hash_key or args.new_key:
        return _keys(args)
    for flag, value in (("--pipeline", args.pipeline), ("--corpus", args.corpus), ("--keys", args.keys)):
        if not value:
            _usage(
                flag,
                f"{flag} is required",
                "ragaudit serve --pipeline bm25 --corpus corpus.jsonl --keys keys.toml",
            )
    if not 0 <= args.port <= 65535:
        _usage("--port", f"not a port: {args.port}", "use 0 (a free port) or 1024-65535")
    from ragaudit.serving.app import Limits, bind, create_app, require_server_libraries, run_server
    from ragaudit.serving.engine import build_engine
    from ragaudit.serving.keys import ServerKeys
    from ragaudit.serving.metrics import ServeMetrics

    require_server_libraries()
    keys = ServerKeys(args.keys)
    engine = build_engine(
        args.pipeline,
        args.corpus,
        serve_superseded=args.serve_superseded,
        min_score=args.min_score,
        qdrant_url=args.qdrant_url,
        index_dir=_index_dir(args),
        say=lambda line: print(line, flush=True),
    )
    limits = Limits(args.max_query_chars, args.max_top_k, args.max_body_bytes, args.request_timeout)
    app = create_app(engine, keys, limits, ServeMetrics())
    sock = _listen(bind, args.host, args.port)
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    info = engine.info
    print(
        f"serving {info['pipeline']} over {info['documents']} documents ({info['chunks']} chunks, "
        f"{info['superseded_left_out']} superseded left out) for {len(keys.tenants)} tenant(s) of {args.keys}",
        flush=True,
    )
    print(f"search: http://{shown}:{port}/search", flush=True)
    print("stop with Ctrl-C", flush=True)
    run_server(app, sock, max_connections=args.max_connections)
    return 0


def _listen(bind: Callable[[str, int], socket.socket], host: str, port: int) -> socket.socket:
    """The listening socket, or a usage error naming the address (not a path) when it cannot be had."""
    try:
        return bind(host, port)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            _usage(
                "--port",
                f"{host}:{port} is already in use (another serve or program listens there)",
                "stop that process, or pass another --port (--port 0 picks a free one)",
            )
        _usage("--host", f"cannot listen on {host}:{port}: {exc.strerror or exc}", "check --host and --port")


def _index_dir(args: argparse.Namespace) -> Path | None:
    from ragaudit.cache import default_cache_dir

    if args.no_index_dir:
        if args.index_dir:
            _usage("--no-index-dir", "give --index-dir or --no-index-dir, not both", "drop one of them")
        return None
    return Path(args.index_dir).expanduser() if args.index_dir else default_cache_dir() / "serve-indexes"


def _keys(args: argparse.Namespace) -> int:
    from ragaudit.serving.keys import hash_key, new_key

    if args.hash_key and args.new_key:
        _usage("--hash-key", "give --hash-key or --new-key, not both", "one at a time")
    if args.new_key:
        key = new_key()
        # the key goes to stderr (the terminal), the entry to stdout: `--new-key acme >> keys.toml` keeps the key out of the file
        print(f"key for {args.new_key} (shown once; give it to the client): {key}", file=sys.stderr)
        print(f"[[key]]\ntenant = {json.dumps(args.new_key)}\nsha256 = {json.dumps(hash_key(key))}")
        return 0
    key = sys.stdin.readline().strip()
    if not key:
        _usage("--hash-key", "no key on stdin", 'printf %s "$KEY" | ragaudit serve --hash-key')
    print(hash_key(key))
    return 0
