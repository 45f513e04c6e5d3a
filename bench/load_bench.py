"""Load test: 10,000 queries at concurrency 64 against a local HTTP server; nothing may be lost.

The server (``tests/servers.py``'s :class:`LocalServer`, run in its own process on 127.0.0.1 only)
answers each query ``"query i"`` with two chunks ``"query i#0"`` and ``"query i#1"`` of the caller's
tenant. With ``--faults`` it also injects, by ``i % 100``:

====  ==========================================================  =====================================
 i    fault                                                       expected outcome
====  ==========================================================  =====================================
 1    HTTP 503 on the first attempt                               ok after a retry (2 attempts)
 2    connection reset on the first attempt                       ok after a retry
 3    a reply slower than the per-attempt timeout (3 s), first    ok after a retry
      attempt; only when ``i % 1000 == 3`` (each costs a timeout)
 4    HTTP 429 on the first attempt                               ok after a retry
 5    a body that is not JSON, every time                         failed: "not valid JSON", 1 attempt
 6    a chunk whose score is a string, every time                 failed: "must be a finite number"
====  ==========================================================  =====================================

Checked after every run (the script exits 1 otherwise): every case is in the run exactly once, with
its own two chunks in order (no response was given to the wrong case) or with the expected failure
(a case with an injected transient fault must show the retry in its attempt count);
the append-only results file holds every case exactly once and reads back to the same outcomes; the
error rate equals the injected permanent-fault rate.

Run: ``.venv/bin/python bench/load_bench.py`` (about a minute on 2 shared cores). The client is the
ordinary :class:`~ragaudit.retrieval.http.HttpRetriever` + runner, as ``ragaudit eval --endpoint`` uses.
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from ragaudit.data.run import Run  # noqa: E402
from ragaudit.data.schema import GoldenCase  # noqa: E402
from ragaudit.retrieval.http import HttpRetriever  # noqa: E402
from ragaudit.retrieval.protocol import Retriever  # noqa: E402
from ragaudit.retry import RetryPolicy  # noqa: E402
from ragaudit.runner.checkpoint import read_results  # noqa: E402
from ragaudit.runner.execute import run_cases  # noqa: E402
from ragaudit.security.error_rate import ErrorRate, run_error_rate  # noqa: E402
from servers import Handler, LocalServer, Reply, Request  # noqa: E402

TENANT = "acme"
SLOW_S = 4.0
ATTEMPT_TIMEOUT_S = 3.0
NO_DEADLINE_S = 600.0
"""The HTTP client's own timeout in a run without a deadline: a guard against a hung test, never reached."""
RETRY = RetryPolicy(max_attempts=3, base_delay_s=0.02, max_delay_s=0.2)
PERMANENT = {5: "not valid JSON", 6: "must be a finite number"}
TRANSIENT = {1, 2, 3, 4}


def query(i: int) -> str:
    return f"query {i}"


def _index(text: str) -> int:
    return int(text.rsplit(" ", 1)[1])


def fault_kind(i: int, slow: bool = True) -> int:
    """The fault injected for query ``i`` (0: none); see the module docstring. ``slow=False`` leaves the
    slow replies (kind 3) out: a run without a per-attempt deadline (tests/test_load.py) has none."""
    kind = i % 100
    return 0 if kind == 3 and (i % 1000 != 3 or not slow) else kind


def fault_handler(faults: bool, delay_s: float = 0.0, slow: bool = True) -> Handler:
    """The server's behaviour (see the module docstring)."""

    def handle(request: Request) -> Reply:
        body = request.json()
        text, tenant = body["query"], body["tenant_id"]
        kind = fault_kind(_index(text), slow) if faults else 0
        first = request.attempt == 1
        if kind == 1 and first:
            return Reply(status=503, body={"detail": "overloaded"})
        if kind == 2 and first:
            return Reply(reset=True)
        if kind == 3 and first:
            return Reply(body=[], delay_s=SLOW_S)
        if kind == 4 and first:
            return Reply(status=429, body={"detail": "slow down"})
        if kind == 5:
            return Reply(body=b'{"results": [{"chunk_id": ')
        if kind == 6:
            return Reply(body={"results": [{"chunk_id": f"{text}#0", "score": "high"}]})
        chunks = [
            {
                "chunk_id": f"{text}#{n}",
                "score": 2.0 - n,
                "tenant_id": tenant,
                "content": text,
                "source_id": "s",
            }
            for n in (0, 1)
        ]
        return Reply(body=chunks, delay_s=delay_s)

    return handle


def make_cases(n: int) -> list[GoldenCase]:
    return [GoldenCase(f"c{i}", query(i), (f"{query(i)}#0",), tenant_id=TENANT) for i in range(n)]


@dataclass
class LoadResult:
    queries: int
    concurrency: int
    seconds: float
    run: Run
    errors: ErrorRate
    slow: bool = True
    """Whether slow replies (kind 3) were injected (``fault_kind(i, slow)``)."""

    @property
    def per_second(self) -> float:
        return self.queries / self.seconds


async def run_load(
    url: str,
    n: int,
    concurrency: int,
    results_path: Path | None = None,
    *,
    retriever: Retriever | None = None,
    deadline: bool = True,
) -> LoadResult:
    """Send ``n`` queries through the HTTP adapter and the runner; time the whole run. ``deadline=False``
    runs without the per-attempt deadline (and so without slow replies to meet it): on a starved machine
    64 queries in flight wait seconds in the queue, and any deadline turns that wait into failures.
    ``retriever`` replaces the plain :class:`HttpRetriever` of ``url`` (a test counts its calls)."""
    client = retriever or HttpRetriever(url, timeout_s=10.0 if deadline else NO_DEADLINE_S)
    cases = make_cases(n)
    started = time.perf_counter()
    run = await run_cases(
        client,
        cases,
        5,
        concurrency=concurrency,
        timeout_s=ATTEMPT_TIMEOUT_S if deadline else None,
        retry=RETRY,
        results_path=results_path,
        progress=False,
        name="load",
    )
    seconds = time.perf_counter() - started
    errors = run_error_rate(run, [c.id for c in cases])
    return LoadResult(n, concurrency, seconds, run, errors, slow=deadline)


def verify(result: LoadResult, faults: bool, results_path: Path | None = None) -> list[str]:
    """Everything that is wrong with a load run (empty: nothing lost, nothing mixed up)."""
    problems: list[str] = []
    run = result.run
    expected_ids = [f"c{i}" for i in range(result.queries)]
    if list(run.cases) != expected_ids:
        problems.append(f"run holds {len(run.cases)} cases, expected {result.queries} in order")
    for i, case_id in enumerate(expected_ids):
        case = run.cases.get(case_id)
        if case is None:
            continue
        kind = fault_kind(i, result.slow) if faults else 0
        if kind in PERMANENT:
            if case.error is None or PERMANENT[kind] not in case.error or case.attempts != 1:
                problems.append(
                    f"{case_id}: expected a permanent failure, got {case.error!r} ({case.attempts})"
                )
        elif case.error is not None:
            problems.append(f"{case_id}: failed: {case.error}")
        elif case.ranking != [f"{query(i)}#0", f"{query(i)}#1"]:
            problems.append(f"{case_id}: got another case's results: {case.ranking}")
        elif kind in TRANSIENT and case.attempts < 2:
            problems.append(f"{case_id}: a fault was injected, yet it took {case.attempts} attempt")
    failed = sum(1 for i in range(result.queries) if faults and fault_kind(i) in PERMANENT)
    if result.errors.failed != failed:
        problems.append(f"error count {result.errors.failed}, expected {failed}")
    if results_path is not None:
        stored, _ = read_results(results_path)
        if sorted(stored) != sorted(expected_ids):
            problems.append(f"results file holds {len(stored)} distinct cases, expected {result.queries}")
        with results_path.open(encoding="utf-8") as handle:
            lines = sum(1 for line in handle if line.startswith('{"id"'))
        if lines != result.queries:
            problems.append(f"results file has {lines} case lines, expected {result.queries} (duplicates?)")
        for case_id, case in stored.items():
            live = run.cases.get(case_id)
            if live is None or live.ranking != case.ranking or live.error != case.error:
                problems.append(f"{case_id}: results file differs from the run")
                break
    return problems


def serve(faults: bool, delay_ms: float) -> None:
    """Serve the fault handler on 127.0.0.1 until stdin closes (the benchmark's server process)."""
    server = LocalServer(fault_handler(faults, delay_ms / 1000.0)).start()
    print(server.port, flush=True)
    try:
        sys.stdin.read()
    finally:
        server.stop()


def bench(n: int, concurrency: int, faults: bool, delay_ms: float) -> tuple[LoadResult, list[str]]:
    command = [sys.executable, __file__, "--serve", "--delay-ms", str(delay_ms)] + (
        ["--faults"] if faults else []
    )
    server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = f"http://127.0.0.1:{int(server.stdout.readline())}/search"
        with tempfile.TemporaryDirectory() as tmp:
            results = Path(tmp) / "results.jsonl"
            result = asyncio.run(run_load(url, n, concurrency, results))
            return result, verify(result, faults, results)
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=10_000)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--delay-ms", type=float, default=0.0, help="server think time per request")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--faults", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.faults, args.delay_ms)
        return 0
    print(
        f"## Load: {args.queries:,} queries, concurrency {args.concurrency}, loopback server "
        f"(think time {args.delay_ms:g} ms)"
    )
    print("| faults | queries | seconds | queries/s | ok | failed (by kind) | retried | lost | problems |")
    print("|---|---:|---:|---:|---:|---|---:|---:|---:|")
    status = 0
    for faults in (False, True):
        result, problems = bench(args.queries, args.concurrency, faults, args.delay_ms)
        errors = result.errors
        kinds = ", ".join(f"{n} {k}" for k, n in errors.by_kind.items()) or "-"
        lost = result.queries - len(result.run.cases)
        print(
            f"| {'injected' if faults else 'none'} | {result.queries:,} | {result.seconds:.1f} | "
            f"{result.per_second:,.0f} | {errors.total - errors.failed:,} | {errors.failed} ({kinds}) | "
            f"{errors.retried} | {lost} | {len(problems)} |"
        )
        for problem in problems[:10]:
            print(f"  problem: {problem}", file=sys.stderr)
        status |= 1 if problems else 0
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nclient peak RSS: {peak_mib:.0f} MiB")
    return status


if __name__ == "__main__":
    sys.exit(main())
