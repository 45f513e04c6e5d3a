"""Benchmark the golden-set tools: the workbench's open time and keystroke latency, and pooling time.

1. Open: a synthetic 5,000-candidate pool (250 cases x 20 candidates, ~700-character texts) served by
   ``ragaudit label`` in its own process; the time from navigation until the page has loaded the pool
   and shows the first candidate, in headless Chromium (``/usr/bin/chromium``); also ``GET /api/pool``
   over plain HTTP.
2. Keystroke: a grade sent from the page (key press) until the server's acknowledgement is back (the
   judgment appended and fsynced), in Chromium; and ``POST /api/judge`` round trips over plain HTTP.
3. Pool: ``ragaudit pool`` over the demo KB (84 cases, 90 documents) with bm25, dense and hybrid at
   depth 20, as a fresh process (imports, index build, embedding, querying, writing); run twice, the
   second with the embedding cache warm.

Targets (issue 14): open < 1 s, keystroke < 50 ms, pool < 15 s.
Run: ``.venv/bin/python bench/label_bench.py`` (about a minute).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
KB = ROOT / "src" / "ragaudit" / "demo_data" / "kb"
CHROMIUM = Path("/usr/bin/chromium")
WORDS = [
    "sensor",
    "gateway",
    "plan",
    "refund",
    "warranty",
    "invoice",
    "limit",
    "tenant",
    "policy",
    "version",
    "support",
    "monthly",
    "annual",
]


def synthetic_pool(path: Path, cases: int = 250, per_case: int = 20) -> int:
    """A pool file of ``cases x per_case`` candidates with ~700-character texts."""
    from ragaudit.labeling.pool import Candidate, ChunkText, Pool, PoolCase

    pooled = []
    for c in range(cases):
        cands = []
        for k in range(per_case):
            text = " ".join(WORDS[(c * 7 + k * 3 + i) % len(WORDS)] for i in range(100))
            meta = {"version": k % 3 + 1, "status": "active" if k % 4 else "superseded"}
            cands.append(
                Candidate(
                    f"doc-{c}-{k}",
                    ChunkText(f"doc-{c}-{k}", 0, f"Document {c}/{k}", text, meta),
                    {"bm25": k + 1},
                )
            )
        pooled.append(
            PoolCase(f"case-{c:04d}", f"query number {c} about {WORDS[c % len(WORDS)]}", f"t{c % 3}", cands)
        )
    Pool(pooled, {"depth": per_case, "systems": ["bm25"]}).write(path)
    return cases * per_case


def ms(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
    return f"median {statistics.median(ordered) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms (n={len(ordered)})"


def workbench(folder: Path, keystrokes: int, opens: int) -> list[tuple[str, str, str]]:
    from label_fixtures import LabelServer

    pool = folder / "pool5k.jsonl"
    n = synthetic_pool(pool)
    rows = []
    srv = LabelServer(pool, folder / "bench.jsonl", "bench")
    try:
        fetch = []
        for _ in range(opens):
            t = time.perf_counter()
            srv.call("GET", "/api/pool")
            fetch.append(time.perf_counter() - t)
        rows.append((f"GET /api/pool, {n:,} candidates (HTTP)", ms(fetch), "-"))
        acks = []
        for i in range(keystrokes):
            body = {"case_id": f"case-{i % 250:04d}", "chunk_id": f"doc-{i % 250}-{i % 20}", "grade": i % 4}
            t = time.perf_counter()
            srv.call("POST", "/api/judge", body)
            acks.append(time.perf_counter() - t)
        rows.append(("POST /api/judge saved (fsync) + acknowledged (HTTP)", ms(acks), "< 50 ms"))
        if CHROMIUM.exists():
            rows += _in_chromium(srv.url, keystrokes, opens, n)
        else:
            rows.append(("page open / keystroke in Chromium", "not measured: /usr/bin/chromium absent", "-"))
    finally:
        srv.stop()
    return rows


def _in_chromium(url: str, keystrokes: int, opens: int, n: int) -> list[tuple[str, str, str]]:
    from playwright.sync_api import sync_playwright

    ready = "body[data-ready='1']:not([data-pending]), body[data-ready='1'][data-pending='0']"
    rows = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(CHROMIUM), args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_page(viewport={"width": 1360, "height": 860})
        loads = []
        for _ in range(opens):
            t = time.perf_counter()
            page.goto(url)
            page.wait_for_selector(ready)
            loads.append(time.perf_counter() - t)
        rows.append(
            (
                f"open the workbench on {n:,} candidates (Chromium, to first candidate shown)",
                ms(loads),
                "< 1 s",
            )
        )
        keys, in_page = [], []
        for i in range(keystrokes):
            t = time.perf_counter()
            page.keyboard.press(str(i % 4))
            page.wait_for_selector(ready)
            keys.append(time.perf_counter() - t)
            in_page.append(float(page.get_attribute("body", "data-last-ms") or "nan") / 1000)
        rows.append(
            ("key press -> saved (fsync) + acknowledged, in the page's own clock", ms(in_page), "< 50 ms")
        )
        rows.append(("  the same, measured from the test driver (+ playwright round trips)", ms(keys), "-"))
        browser.close()
    return rows


def pooling(folder: Path) -> list[tuple[str, str, str]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "RAGAUDIT_CACHE_DIR": str(folder / "cache")}
    cmd = [sys.executable, "-m", "ragaudit.cli.main", "pool", "--dataset", str(KB / "golden.jsonl")]
    cmd += [
        "--corpus",
        str(KB / "corpus.jsonl"),
        "--pipelines",
        "bm25,dense,hybrid",
        "--depth",
        "20",
        "--no-progress",
    ]
    rows = []
    for label in ("cold embedding cache", "warm embedding cache"):
        t = time.perf_counter()
        done = subprocess.run(
            [*cmd, "--out", str(folder / "pool.jsonl")], env=env, capture_output=True, text=True
        )
        took = time.perf_counter() - t
        if done.returncode != 0:
            raise SystemExit(done.stderr)
        summary = next(line for line in done.stdout.splitlines() if line.startswith("pooled "))
        rows.append(
            (f"ragaudit pool, demo KB, bm25+dense+hybrid depth 20 ({label})", f"{took:.1f} s", "< 15 s")
        )
    rows.append(("  " + summary.split(":")[0], "", ""))
    t = time.perf_counter()
    probe = "from ragaudit.retrieval.embedder import Embedder; Embedder().encode(['warm up'])"
    subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, check=True)
    rows.append(
        (
            "  of which: a fresh process importing torch and loading the embedding model",
            f"{time.perf_counter() - t:.1f} s",
            "-",
        )
    )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keystrokes", type=int, default=200)
    parser.add_argument("--opens", type=int, default=5)
    parser.add_argument("--skip-pool", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        rows = workbench(folder, args.keystrokes, args.opens)
        if not args.skip_pool:
            rows += pooling(folder)
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'figure':<44}  target")
    for name, figure, target in rows:
        print(f"{name:<{width}}  {figure:<44}  {target}")
    print(json.dumps({"cpu_count": os.cpu_count(), "load_avg": os.getloadavg()}))


if __name__ == "__main__":
    main()
