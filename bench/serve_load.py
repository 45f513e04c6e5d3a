"""Load benchmark of ``ragaudit serve`` on loopback: throughput, latency percentiles, errors, memory.

For each pipeline (``--pipelines bm25,dense``) the script starts ``python -m ragaudit serve --port 0``
over the demo knowledge base with one key per tenant, then, from one client process (httpx, one
keep-alive connection per request in flight):

1. for each concurrency level (``--concurrency 1,8,64``): a warm-up of 20 requests, then
   ``--requests`` requests (the golden set's questions, cycled, each asked by its own tenant with
   that tenant's key, ``top_k`` 10) from httpx clients of 8 connections each (as ``--endpoint``'s
   client shards its pool); requests/s over the wall time, p50 / p95 / p99 latency as the client saw
   it, the server's own mean time per search (from ``/metrics``), and every non-200 answer or
   transport error counted;
2. a soak at concurrency 8 for ``--soak-seconds`` (default 60), sampling the server's RSS
   (``/proc/PID/status`` VmRSS) every 5 s: RSS at the start and end of the soak, its maximum, requests
   and errors.

Bounded: loopback only, a fixed number of requests per level, the soak's length is a flag. The
client and the server share the machine's cores (2 here, shared with other jobs: the load average
is recorded; the client's own CPU is part of every figure), so the figures are a floor, not the service's capacity. Exit 1 when any request
failed (the brief's bar: error rate 0).

Run: ``.venv/bin/python bench/serve_load.py [--pipelines bm25,dense] [--soak-seconds 300]
[--out serve_load.json]``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
KB = ROOT / "src" / "ragaudit" / "demo_data" / "kb"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))]


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def server_seconds(url: str) -> tuple[float, float]:
    """(seconds, requests) the server spent in ``POST /search`` so far, summed over tenants (/metrics)."""
    total, count = 0.0, 0.0
    for line in httpx.get(url.rsplit("/", 1)[0] + "/metrics", timeout=30).text.splitlines():
        if line.startswith("ragaudit_serve_request_duration_seconds_sum"):
            total += float(line.rsplit(" ", 1)[1])
        elif line.startswith("ragaudit_serve_request_duration_seconds_count"):
            count += float(line.rsplit(" ", 1)[1])
    return total, count


def write_keys(folder: Path) -> dict[str, str]:
    sys.path.insert(0, str(ROOT / "src"))
    from ragaudit.serving.keys import hash_key, new_key

    tenants = sorted({json.loads(line)["tenant_id"] for line in (KB / "corpus.jsonl").open(encoding="utf-8")})
    keys = {t: new_key() for t in tenants}
    (folder / "keys.toml").write_text(
        "".join(f'[[key]]\ntenant = "{t}"\nsha256 = "{hash_key(k)}"\n' for t, k in keys.items()),
        encoding="utf-8",
    )
    return keys


def start_serve(pipeline: str, keys_file: Path) -> tuple[subprocess.Popen[str], str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "ragaudit", "serve", "--pipeline", pipeline, "--corpus", str(KB / "corpus.jsonl"),
         "--keys", str(keys_file), "--port", "0"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
    )  # fmt: skip
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("search: "):
            threading.Thread(target=proc.stdout.read, daemon=True).start()  # keep the pipe drained
            return proc, line.split()[1]
    raise RuntimeError(f"serve {pipeline} did not start (exit {proc.wait()})")


def questions() -> list[tuple[str, str]]:
    out = []
    for line in (KB / "golden.jsonl").open(encoding="utf-8"):
        case = json.loads(line)
        out.append((case["tenant_id"], case["query"]))
    return out


async def load(url: str, keys: dict[str, str], asks: list[tuple[str, str]], concurrency: int, *,
               requests: int | None = None, seconds: float | None = None, on_tick: Any = None) -> dict[str, Any]:  # fmt: skip
    """``requests`` requests (or as many as fit in ``seconds``) with ``concurrency`` in flight."""
    latencies: list[float] = []
    errors: dict[str, int] = {}
    counter = iter(range(10**9))
    deadline = time.perf_counter() + seconds if seconds is not None else None
    # clients of at most 8 connections each, one per 8 workers: httpcore's pool costs O(size^2) CPU per
    # request, and at 64 connections in one client the client, not the server, is what gets measured
    shards = max(1, (concurrency + 7) // 8)
    per_shard = (concurrency + shards - 1) // shards
    limits = httpx.Limits(max_connections=per_shard, max_keepalive_connections=per_shard)
    clients = [httpx.AsyncClient(limits=limits, timeout=30) for _ in range(shards)]
    try:

        async def worker(client: httpx.AsyncClient) -> None:
            while True:
                i = next(counter)
                if requests is not None and i >= requests:
                    return
                if deadline is not None and time.perf_counter() >= deadline:
                    return
                tenant, query = asks[i % len(asks)]
                started = time.perf_counter()
                try:
                    reply = await client.post(url, json={"query": query, "top_k": 10},
                                              headers={"Authorization": f"Bearer {keys[tenant]}"})  # fmt: skip
                    ok = reply.status_code == 200 and isinstance(reply.json().get("results"), list)
                    kind = "ok" if ok else f"HTTP {reply.status_code}"
                except httpx.HTTPError as exc:
                    kind = type(exc).__name__
                latencies.append(time.perf_counter() - started)
                if kind != "ok":
                    errors[kind] = errors.get(kind, 0) + 1

        async def ticker() -> None:
            while on_tick is not None:
                await asyncio.sleep(5)
                on_tick()

        tick = asyncio.create_task(ticker())
        started = time.perf_counter()
        await asyncio.gather(*(worker(clients[n % shards]) for n in range(concurrency)))
        wall = time.perf_counter() - started
        tick.cancel()
    finally:
        for client in clients:
            await client.aclose()
    ms = [x * 1000 for x in latencies]
    return {
        "concurrency": concurrency,
        "requests": len(latencies),
        "seconds": round(wall, 2),
        "requests_per_s": round(len(latencies) / wall, 1),
        "p50_ms": round(percentile(ms, 50), 2),
        "p95_ms": round(percentile(ms, 95), 2),
        "p99_ms": round(percentile(ms, 99), 2),
        "mean_ms": round(statistics.fmean(ms), 2),
        "errors": sum(errors.values()),
        "error_kinds": errors,
    }


def run_pipeline(
    pipeline: str, keys: dict[str, str], keys_file: Path, args: argparse.Namespace
) -> dict[str, Any]:
    proc, url = start_serve(pipeline, keys_file)
    asks = questions()
    try:
        result: dict[str, Any] = {
            "pipeline": pipeline,
            "rss_mb_ready": round(rss_mb(proc.pid), 1),
            "levels": [],
        }
        for level in args.concurrency:
            asyncio.run(load(url, keys, asks, level, requests=20))  # warm-up
            before = server_seconds(url)
            row = asyncio.run(load(url, keys, asks, level, requests=args.requests))
            after = server_seconds(url)
            row["server_mean_ms"] = round(1000 * (after[0] - before[0]) / max(1.0, after[1] - before[1]), 2)
            result["levels"].append(row)
            print(f"{pipeline} c={level}: {row['requests_per_s']} req/s  p50 {row['p50_ms']} ms  "
                  f"p95 {row['p95_ms']} ms  p99 {row['p99_ms']} ms  (server {row['server_mean_ms']} ms)  errors {row['errors']}", flush=True)  # fmt: skip
        samples = [rss_mb(proc.pid)]
        soak = asyncio.run(load(url, keys, asks, 8, seconds=args.soak_seconds,
                                on_tick=lambda: samples.append(rss_mb(proc.pid))))  # fmt: skip
        samples.append(rss_mb(proc.pid))
        soak.update(rss_mb_start=round(samples[0], 1), rss_mb_end=round(samples[-1], 1),
                    rss_mb_max=round(max(samples), 1), rss_samples=len(samples))  # fmt: skip
        result["soak"] = soak
        print(f"{pipeline} soak {args.soak_seconds:g} s at c=8: {soak['requests']} requests, "
              f"{soak['errors']} errors, RSS {soak['rss_mb_start']} -> {soak['rss_mb_end']} MB "
              f"(max {soak['rss_mb_max']})", flush=True)  # fmt: skip
        return result
    finally:
        proc.terminate()
        proc.wait(20)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pipelines", default="bm25,dense")
    parser.add_argument("--concurrency", default="1,8,64", type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--requests", type=int, default=1000, help="requests per concurrency level")
    parser.add_argument("--soak-seconds", type=float, default=60.0)
    parser.add_argument("--out", help="write the figures as JSON here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        keys = write_keys(Path(folder))
        results = {
            "load_average_start": os.getloadavg(),
            "cpus": os.cpu_count(),
            "pipelines": [
                run_pipeline(p, keys, Path(folder) / "keys.toml", args) for p in args.pipelines.split(",")
            ],
            "load_average_end": os.getloadavg(),
        }
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    failed = sum(row["errors"] for p in results["pipelines"] for row in [*p["levels"], p["soak"]])
    print(f"load average {results['load_average_start'][0]:.1f} -> {results['load_average_end'][0]:.1f}; "
          f"{failed} failed requests")  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
