"""Benchmark the runner: its own overhead per query, and throughput scaling with concurrency over HTTP.

1. Overhead: 10,000 queries against an in-process retriever that returns at once. The runner's cost
   per query (timeouts, retry bookkeeping, result normalisation, tenant check) is the run time minus
   a bare ``await retriever.search(...)`` loop over the same queries. Also with the append-only
   results file, and through the ``search_many`` batch path.
2. Batch fast path on a real engine: the built-in BM25 retriever over 5,000 synthetic chunks, 2,000
   queries, one case at a time through ``search`` versus ``search_many`` batches of 64.
3. Scaling: a local HTTP endpoint (``tests/servers.py`` in its own process, 127.0.0.1) that sleeps
   ``--delay-ms`` per request; throughput of :class:`HttpRetriever` + runner at concurrency 1..64.
   Request counts are bounded (``--per-worker`` requests per unit of concurrency, at least 40).

Run: ``.venv/bin/python bench/runner_bench.py`` (about 30 s). Figures are medians of ``--repeats``.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ragaudit.data.schema import GoldenCase
from ragaudit.retrieval.http import HttpRetriever
from ragaudit.runner.execute import run_cases

ROOT = Path(__file__).resolve().parents[1]


class Noop:
    """Returns one chunk of the caller's tenant, immediately."""

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[dict[str, Any]]:
        return [{"chunk_id": query, "score": 1.0, "tenant_id": tenant_id, "content": "", "source_id": "s"}]


class NoopBatched(Noop):
    def search_many(self, tenant_id: str, queries: Sequence[str], top_k: int) -> list[list[dict[str, Any]]]:
        return [[{"chunk_id": q, "score": 1.0, "tenant_id": tenant_id}] for q in queries]


def make_cases(n: int) -> list[GoldenCase]:
    return [GoldenCase(f"c{i}", f"query {i}", (f"query {i}",), tenant_id="acme") for i in range(n)]


async def bare_loop(retriever: Noop, cases: Sequence[GoldenCase]) -> None:
    for case in cases:
        await retriever.search(tenant_id="acme", query=case.query, top_k=10)


def timed(fn: Any, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def overhead(n: int, repeats: int) -> list[tuple[str, float]]:
    cases = make_cases(n)
    bare = timed(lambda: asyncio.run(bare_loop(Noop(), cases)), repeats)
    rows = [("bare await loop (baseline)", bare)]
    configs: list[tuple[str, Any, dict[str, Any]]] = [
        ("runner, concurrency 1", Noop(), {"concurrency": 1}),
        ("runner, concurrency 8 (default)", Noop(), {}),
        ("runner, concurrency 64", Noop(), {"concurrency": 64}),
        ("runner + results file (fsync / 32 lines)", Noop(), {"results_path": True}),
        ("runner, search_many batches of 64", NoopBatched(), {}),
    ]
    with tempfile.TemporaryDirectory() as tmp:
        for label, retriever, kwargs in configs:
            counter = iter(range(10**6))

            def once(
                retriever: Any = retriever, kwargs: dict[str, Any] = kwargs, counter: Any = counter
            ) -> None:
                options = dict(kwargs)
                if options.pop("results_path", False):
                    options["results_path"] = Path(tmp) / f"r{next(counter)}.jsonl"
                asyncio.run(run_cases(retriever, cases, 10, progress=False, **options))

            rows.append((label, timed(once, repeats)))
    return [(label, (seconds - (bare if i else 0.0)) / n * 1000.0) for i, (label, seconds) in enumerate(rows)]


def bm25_batches(repeats: int, chunks: int = 5000, queries: int = 2000) -> list[tuple[str, float]] | None:
    try:
        from ragaudit.corpus.model import Chunk
        from ragaudit.retrieval.bm25 import BM25Retriever

        rng = random.Random(0)
        vocab = [f"w{i}" for i in range(3000)]
        texts = [" ".join(rng.choices(vocab, k=60)) for _ in range(chunks)]
        retriever = BM25Retriever.from_chunks(
            [Chunk(f"d{i}#0", f"d{i}", "acme", 0, len(t), t) for i, t in enumerate(texts)],
            stemmer=None,
            stopwords=None,
        )
    except ImportError as exc:
        print(f"(BM25 batch comparison skipped: {exc})")
        return None
    cases = [
        GoldenCase(f"q{i}", " ".join(rng.choices(vocab, k=5)), ("d0#0",), tenant_id="acme")
        for i in range(queries)
    ]
    rows = []
    for label, batch_size in (("search(), one case at a time", 1), ("search_many(), batches of 64", 64)):
        seconds = timed(
            lambda b=batch_size: asyncio.run(run_cases(retriever, cases, 10, batch_size=b, progress=False)),
            repeats,
        )
        rows.append((label, seconds / queries * 1000.0))
    return rows


def scaling(
    levels: Sequence[int], delay_ms: float, per_worker: int, repeats: int
) -> list[tuple[int, int, float]]:
    server = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "servers.py"), "--delay-ms", str(delay_ms)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{int(server.stdout.readline())}/search"
        retriever = HttpRetriever(url)
        rows = []
        for concurrency in levels:
            n = max(40, per_worker * concurrency)
            cases = make_cases(n)

            def once(concurrency: int = concurrency, cases: list[GoldenCase] = cases) -> None:
                run = asyncio.run(run_cases(retriever, cases, 10, concurrency=concurrency, progress=False))
                failed = [c.error for c in run.cases.values() if c.error]
                if failed:
                    raise RuntimeError(f"{len(failed)} requests failed, e.g. {failed[0]}")

            seconds = timed(once, repeats)
            rows.append((concurrency, n, n / seconds))
        return rows
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--delay-ms", type=float, default=50.0)
    parser.add_argument("--per-worker", type=int, default=20)
    parser.add_argument("--levels", default="1,4,8,16,32,64")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()

    print(
        f"## Runner overhead, {args.queries:,} queries, no-op in-process retriever (median of {args.repeats})"
    )
    print("Runner rows are net of the baseline (the bare loop's own time per query).")
    print(f"| {'configuration':<44} | ms/query |")
    print(f"|{'-' * 46}|---------:|")
    for label, ms in overhead(args.queries, args.repeats):
        print(f"| {label:<44} | {ms:8.4f} |")

    batch_rows = bm25_batches(args.repeats)
    if batch_rows:
        print("\n## Batch fast path: BM25, 5,000 synthetic chunks, 2,000 queries")
        print(f"| {'path':<44} | ms/query |")
        print(f"|{'-' * 46}|---------:|")
        for label, ms in batch_rows:
            print(f"| {label:<44} | {ms:8.4f} |")

    levels = [int(x) for x in args.levels.split(",")]
    print(
        f"\n## Throughput vs concurrency, HTTP endpoint sleeping {args.delay_ms:g} ms per request (loopback)"
    )
    print("| concurrency | requests | queries/s | speed-up vs 1 |")
    print("|------------:|---------:|----------:|--------------:|")
    rows = scaling(levels, args.delay_ms, args.per_worker, args.repeats)
    base = rows[0][2]
    for concurrency, n, qps in rows:
        print(f"| {concurrency:>11} | {n:>8} | {qps:9.1f} | {qps / base:12.1f}x |")


if __name__ == "__main__":
    main()
