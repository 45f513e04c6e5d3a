"""How long a command is silent (issue 25.4): the time to its first output byte and its longest silence.

Runs a command (by default ``ragaudit audit-tenants --pipeline hybrid --canaries ...`` on the demo
knowledge base with an empty embedding cache, so the pipeline build embeds every chunk), stamps
each line it prints on stdout or stderr with the time since the start, and prints them, then the
first-byte time, the longest silence after it and the total. Targets: first byte within 2 s, no
silence over 5 s. Exits 1 when a target is missed.

Run: ``.venv/bin/python bench/silence_bench.py`` (about a minute on 2 quiet cores);
``.venv/bin/python bench/silence_bench.py -- ragaudit eval --dataset ... --run ...`` for any command.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from importlib.resources import files
from itertools import pairwise
from typing import IO

FIRST_BYTE_S = 2.0
LONGEST_SILENCE_S = 5.0


def default_command(out_dir: str) -> list[str]:
    kb = files("ragaudit") / "demo_data" / "kb"
    return [
        sys.executable, "-m", "ragaudit", "audit-tenants", "--corpus", str(kb / "corpus.jsonl"),
        "--pipeline", "hybrid", "--canaries", str(kb / "canaries.jsonl"), "--out", f"{out_dir}/audit.json",
    ]  # fmt: skip


def stamped(cmd: list[str], env: dict[str, str]) -> tuple[int, list[float], float]:
    """Run ``cmd``; print each line with its time; return the exit code, the line times and the total."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    times: list[float] = []
    lock = threading.Lock()

    def pump(stream: IO[bytes], name: str) -> None:
        for raw in iter(stream.readline, b""):
            at = time.monotonic() - start
            with lock:
                times.append(at)
                print(f"{at:7.2f} {name} {raw.decode(errors='replace').rstrip()}", flush=True)

    assert proc.stdout is not None and proc.stderr is not None
    pumps = [threading.Thread(target=pump, args=(proc.stdout, "out")), threading.Thread(target=pump, args=(proc.stderr, "err"))]  # fmt: skip
    for t in pumps:
        t.start()
    code = proc.wait()
    total = time.monotonic() - start
    for t in pumps:
        t.join()
    return code, sorted(times), total


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="*", help="the command to watch (after --); default: the cold audit")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ragaudit-silence-") as tmp:
        env = {
            **os.environ,
            "RAGAUDIT_CACHE_DIR": f"{tmp}/cache",
            "RAGAUDIT_HISTORY": f"{tmp}/history.sqlite",
        }
        cmd = args.command or default_command(tmp)
        code, times, total = stamped(cmd, env)
    if not times:
        print(f"exit {code}; the command printed nothing in {total:.2f} s")
        return 1
    points = [*times, total]
    longest = max(b - a for a, b in pairwise(points))
    load = os.getloadavg()[0]
    print(
        f"exit {code}; first byte {times[0]:.2f} s (target {FIRST_BYTE_S:.0f}); longest silence after it "
        f"{longest:.2f} s (target {LONGEST_SILENCE_S:.0f}); total {total:.2f} s; load average {load:.1f}"
    )
    return 0 if times[0] <= FIRST_BYTE_S and longest <= LONGEST_SILENCE_S else 1


if __name__ == "__main__":
    raise SystemExit(main())
