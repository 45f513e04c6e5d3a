"""How big a tenant audit's report gets when the audit finds thousands of leaks (issue 25, item 5).

Runs ``ragaudit audit-tenants`` on the demo knowledge base against a retriever that leaks on nearly
every request (``ragaudit.security.leaky:demo_backfill``), once with the default ``--max-records``
(200 leak records listed, every leak counted by class and by owner -> caller pair) and once with every
leak record listed (``--max-records`` set to the leak count, which is what the report held before the
option existed). Each run is a fresh process under ``/usr/bin/time`` (wall, CPU, peak RSS); the script
prints both, the ratio, and checks that the two reports count the same leaks with the same verdict.

    .venv/bin/python bench/report_size_bench.py
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from importlib.resources import files
from pathlib import Path
from typing import Any

KB = Path(str(files("ragaudit") / "demo_data" / "kb"))
LEAKY = "ragaudit.security.leaky:demo_backfill"


def run_audit(out: Path, max_records: int | None) -> dict[str, Any]:
    """One audit in a fresh process: its exit code, wall and CPU seconds, peak MB and report."""
    timing = out.with_suffix(".time")
    command = [
        "/usr/bin/time", "-o", str(timing), "-f", "%e %U %S %M",
        sys.executable, "-m", "ragaudit", "audit-tenants",
        "--corpus", str(KB / "corpus.jsonl"), "--canaries", str(KB / "canaries.jsonl"),
        "--retriever", LEAKY, "--no-progress", "--out", str(out),
        *(["--max-records", str(max_records)] if max_records is not None else []),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, check=False, env={**os.environ})
    wall, user, system, peak_kb = timing.read_text(encoding="utf-8").split()[-4:]
    report = json.loads(out.read_text(encoding="utf-8"))
    return {
        "exit": done.returncode,
        "wall": float(wall),
        "cpu": float(user) + float(system),
        "peak_mb": int(peak_kb) / 1024,
        "bytes": out.stat().st_size,
        "leaks": report["leaks"]["count"],
        "listed": len(report["leaks"]["records"]),
        "verdict": report["verdict"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        bounded = run_audit(Path(tmp) / "bounded.json", None)
        every = run_audit(Path(tmp) / "every.json", int(bounded["leaks"]))
    assert bounded["leaks"] == every["leaks"] and bounded["verdict"] == every["verdict"] == "leak"
    assert bounded["exit"] == every["exit"] == 1 and every["listed"] == every["leaks"]
    print(
        f"audit-tenants --retriever {LEAKY} on the demo KB: {bounded['leaks']:,} leaks, verdict leak, exit 1"
    )
    print("| report | leak records listed | report MB | peak MB | wall s | CPU s |")
    print("|---|---:|---:|---:|---:|---:|")
    for name, row in (("--max-records 200 (default)", bounded), ("every record listed (before)", every)):
        print(
            f"| {name} | {row['listed']:,} | {row['bytes'] / 1e6:.2f} | {row['peak_mb']:.0f} | "
            f"{row['wall']:.2f} | {row['cpu']:.2f} |"
        )
    print(
        f"ratio every / default: report {every['bytes'] / bounded['bytes']:.0f}x, "
        f"peak {every['peak_mb'] / bounded['peak_mb']:.2f}x; target: under 5 MB with the total stated "
        f"({'met' if bounded['bytes'] < 5e6 else 'NOT met'}: {bounded['bytes'] / 1e6:.2f} MB)"
    )


if __name__ == "__main__":
    main()
