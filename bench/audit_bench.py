"""How long the default tenant audit takes, and how much it asks, on the demo knowledge base.

Runs ``ragaudit audit-tenants`` with its defaults (top_k 1, 10 and 50, concurrency 1 and 32, a budget
of 3,000 requests, hostile ids, every returned field attributed) against the ``bm25`` preset, in
process, and prints the requests sent, the chunks attributed, the verdict and the wall time (median of
``--repeat`` runs). The same audit against two leaky retrievers shows what the attribution costs when
there is something to find (field leaks) or nothing to attribute (opaque output), and the
whole-response walk on a service with a facets block beside its results (leaky, and its honest twin).

    PYTHONPATH=src .venv/bin/python bench/audit_bench.py --repeat 3
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import tempfile
import time
from importlib.resources import files
from pathlib import Path

from ragaudit.cli.main import main

KB = Path(str(files("ragaudit") / "demo_data" / "kb"))
SOURCES = {
    "bm25": ["--pipeline", "bm25"],
    "field leak (titles)": ["--retriever", "ragaudit.security.leaky:demo_field_leak"],
    "opaque output": ["--retriever", "ragaudit.security.leaky:demo_opaque_output"],
    "response leak (facets)": ["--retriever", "ragaudit.security.leaky:demo_response_leak"],
    "its honest twin": ["--retriever", "ragaudit.security.leaky:demo_response_honest"],
}


def run_once(source: list[str], out: Path) -> tuple[float, int, dict[str, object]]:
    args = ["audit-tenants", "--corpus", str(KB / "corpus.jsonl"), "--canaries", str(KB / "canaries.jsonl")]
    start = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = main([*args, *source, "--no-progress", "--out", str(out)])
    return time.perf_counter() - start, code, json.loads(out.read_text(encoding="utf-8"))


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", choices=list(SOURCES), help="time one source only")
    args = parser.parse_args()
    print(
        "| source | requests | answered | chunks checked | unattributed | verdict | exit | wall s (median) |"
    )
    print("|---|---:|---:|---:|---:|---|---:|---:|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, source in SOURCES.items():
            if args.only and name != args.only:
                continue
            times = []
            for _ in range(args.repeat):
                seconds, code, report = run_once(source, Path(tmp) / "audit.json")
                times.append(seconds)
            asking = report["asking"]
            assert isinstance(asking, dict)
            requests = asking["requests"]
            unattributed = report["unattributed"]
            assert isinstance(unattributed, dict)
            print(
                f"| {name} | {requests['total']:,} | {requests['answered']:,} | {report['checked_chunks']:,} | "
                f"{unattributed['count']:,} | {report['verdict']} | {code} | {statistics.median(times):.2f} |"
            )


if __name__ == "__main__":
    main_bench()
