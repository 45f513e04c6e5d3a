"""Default engine vs ``--fast`` on a run with one very long ranking (issue 10: memory ∝ run size).

Data (seeded, under ``bench/_data/long_ranking/``, gitignored, reused when present): ``--queries``
queries × ``--depth`` results plus one query with ``--long`` results, graded 0-3 qrels (20 judged
items per query, 60 for the long one). Each engine scores the files in its own process with
``ragaudit eval --fast off|on --no-history --metrics M`` (default: eval's default metrics, all
with a cut-off; ``--metrics MAP,RPrec,nDCG`` makes every engine read whole rankings); time is the process's wall time,
peak memory its ``VmHWM``.

Run: ``.venv/bin/python bench/long_ranking_bench.py`` (about a minute).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "bench" / "_data" / "long_ranking"
CHILD = """
import sys
from ragaudit.cli.main import main
code = main(sys.argv[1:])
status = open("/proc/self/status").read().split("VmHWM:")[1].split()[0]
print(f"VmHWM_KB={status}", file=sys.stderr)
sys.exit(code)
"""


def make_files(queries: int, depth: int, long: int, seed: int) -> tuple[Path, Path]:
    DATA.mkdir(parents=True, exist_ok=True)
    qrels, run = DATA / f"qrels-{queries}-{depth}-{long}.txt", DATA / f"run-{queries}-{depth}-{long}.trec"
    if qrels.is_file() and run.is_file():
        return qrels, run
    rng = np.random.default_rng(seed)
    sizes = [long] + [depth] * queries
    with qrels.open("w") as q_out, run.open("w") as r_out:
        for qid, size in enumerate(sizes):
            judged = rng.choice(size, size=min(size, 60 if qid == 0 else 20), replace=False)
            q_out.writelines(f"q{qid} 0 d{int(j)} {int(rng.integers(0, 4))}\n" for j in judged)
            scores = np.sort(rng.random(size))[::-1]
            r_out.writelines(f"q{qid} Q0 d{i} {i + 1} {s:.6f} bench\n" for i, s in enumerate(scores.tolist()))
    return qrels, run


def measure(qrels: Path, run: Path, fast: str, metrics: str) -> tuple[float, float, str]:
    argv = ["eval", "--dataset", str(qrels), "--run", str(run), "--fast", fast, "--no-history"]
    argv += ["--metrics", metrics]
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD, *argv], capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"--fast {fast} failed ({done.returncode}): {done.stderr}")
    peak_kb = int(done.stderr.split("VmHWM_KB=")[1].split()[0])
    first = metrics.split(",")[0]
    table = next(line for line in done.stdout.splitlines() if line.startswith(first + " "))
    return seconds, peak_kb / 1024, table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=19_000)
    parser.add_argument("--depth", type=int, default=100)
    parser.add_argument("--long", type=int, default=150_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--metrics", default="nDCG@10,R@5,R@10,R@100,P@5,MRR@10,MAP@100,Hit@5")
    args = parser.parse_args()
    qrels, run = make_files(args.queries, args.depth, args.long, args.seed)
    print(
        f"run {run.stat().st_size / 2**20:.1f} MiB: {args.queries:,} x {args.depth} + 1 x {args.long:,} results"
    )
    print(f"metrics {args.metrics}")
    print(f"| engine | time s | peak MB | {args.metrics.split(',')[0]} |")
    print("|---|---:|---:|---|")
    for fast in ("off", "on"):
        seconds, peak_mb, table = measure(qrels, run, fast, args.metrics)
        print(f"| `--fast {fast}` | {seconds:.1f} | {peak_mb:,.0f} | {table.split()[-1]} |")


if __name__ == "__main__":
    main()
