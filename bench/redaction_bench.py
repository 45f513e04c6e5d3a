"""Benchmark credential redaction (``ragaudit.redaction``): its cost per response body, and its share
of a real HTTP run.

1. Per body: a JSON response of 10 chunks whose content is demo-KB text cut to ``size`` characters,
   redacted for three kinds of token (``tok-`` + hex, URL-safe base64, ``sk-`` + base64) that it does
   not contain (the common case), against ``json.loads`` of the same body. Minimum of ``--repeats``.
2. End to end: ``HttpRetriever`` + runner, ``--queries`` queries at concurrency 32 with ``--auth-env``
   set, against a local service in its own process answering 10 such chunks at once; redaction on
   versus off (the retriever's redactor replaced by the no-op one), alternating, median of 3.

Run: ``.venv/bin/python bench/redaction_bench.py`` (about 2 minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import ragaudit.retrieval.http as http_module
from ragaudit.data.schema import GoldenCase
from ragaudit.redaction import redactor
from ragaudit.retrieval.http import HttpRetriever
from ragaudit.runner.execute import run_cases

ROOT = Path(__file__).resolve().parents[1]
TOKENS = {
    "tok- + 40 hex": "tok-3f9a0c1be4d27781a9c05e6f2b4d8c1a7e03f9d2",
    "urlsafe base64, 43": "q5Ck2xV9-LrT0aZ3_hN8bWm4YpE1sGdJfUoR7tKcXiM",
    "sk- + base64, 51": "sk-Zr8Qm2Kx7Vb1Nc4Pd9Lf3Hg6Jt0Ys5Wa8Ue2Io7Rq1Ek4Tm6",
}
SERVER = """
import json, sys
sys.path.insert(0, {tests!r})
from servers import LocalServer, Reply
texts = {texts!r}
def handle(request):
    tenant = request.json()["tenant_id"]
    return Reply(body=[{{"chunk_id": f"doc-{{i}}#0", "score": 1.0, "tenant_id": tenant, "content": t}}
                       for i, t in enumerate(texts)])
server = LocalServer(handle).start()
print(server.port, flush=True)
sys.stdin.read()
server.stop()
"""


def demo_texts(size: int, count: int = 10) -> list[str]:
    lines = (ROOT / "src" / "ragaudit" / "demo_data" / "kb" / "corpus.jsonl").read_text(encoding="utf-8")
    docs = [json.loads(line)["text"] for line in lines.splitlines()]
    return [
        (docs[i % len(docs)] * (1 + size // max(1, len(docs[i % len(docs)]))))[:size] for i in range(count)
    ]


def best_us(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times) * 1e6


def per_body(sizes: list[int], repeats: int) -> None:
    print(f"## Redaction of one response body (10 chunks), µs, min of {repeats}")
    print("| content per chunk | body bytes | json.loads | " + " | ".join(TOKENS) + " |")
    print("|---:|---:|---:|" + "---:|" * len(TOKENS))
    for size in sizes:
        body = json.dumps(
            [
                {"chunk_id": f"doc-{i}#0", "score": 1.0, "tenant_id": "acme", "content": t}
                for i, t in enumerate(demo_texts(size))
            ]
        ).encode()
        parse = best_us(lambda b=body: json.loads(b), repeats)
        cells = []
        for token in TOKENS.values():
            scrub = redactor(token)
            cells.append(f"{best_us(lambda s=scrub, b=body: s.body(b), repeats):.1f}")
        print(f"| {size} | {len(body):,} | {parse:.1f} | " + " | ".join(cells) + " |")


def end_to_end(size: int, queries: int) -> None:
    code = SERVER.format(tests=str(ROOT / "tests"), texts=demo_texts(size))
    server = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    os.environ["RAGAUDIT_BENCH_TOKEN"] = TOKENS["urlsafe base64, 43"]
    real = http_module.redactor
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{int(server.stdout.readline())}/search"
        retriever = HttpRetriever(url, auth_header_env="RAGAUDIT_BENCH_TOKEN")
        cases = [GoldenCase(f"c{i}", f"query {i}", ("doc-0#0",), tenant_id="acme") for i in range(queries)]

        def once() -> float:
            started = time.perf_counter()
            run: Any = asyncio.run(run_cases(retriever, cases, 10, concurrency=32, progress=False))
            failed = [c.error for c in run.cases.values() if c.error]
            if failed:
                raise RuntimeError(f"{len(failed)} requests failed, e.g. {failed[0]}")
            return time.perf_counter() - started

        times: dict[str, list[float]] = {"off": [], "on": []}
        once()  # warm up
        for _ in range(3):
            for label in ("off", "on"):
                http_module.redactor = real if label == "on" else (lambda secret: real(None))  # type: ignore[assignment]
                times[label].append(once())
    finally:
        http_module.redactor = real
        if server.stdin is not None:
            server.stdin.close()
        server.wait(10)
    off, on = statistics.median(times["off"]), statistics.median(times["on"])
    print(
        f"| {size} | {queries:,} | {queries / off:.0f} | {queries / on:.0f} | {(on / off - 1) * 100:+.1f}% |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100,800,3000")
    parser.add_argument("--queries", type=int, default=4000)
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    per_body(sizes, args.repeats)
    print("\n## End to end: HttpRetriever + runner, concurrency 32, median of 3 (queries/s)")
    print("| content per chunk | queries | redaction off | redaction on | run time |")
    print("|---:|---:|---:|---:|---:|")
    for size in (sizes[0], sizes[1]):
        end_to_end(size, args.queries)


if __name__ == "__main__":
    main()
