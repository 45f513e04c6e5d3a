"""The walk of docs/golden-sets.md, run for real: from an empty folder to a validated golden set.

Every step is the ``ragaudit`` command the docs show, run as a subprocess in a fresh folder. The two
annotators are simulated through the workbench's own HTTP API (the same requests the page sends):
"ana" grades like the demo KB's expert labels (unknown candidates 0) and marks its evidence spans;
"bob" does the same but disagrees by one grade on a seeded ~20 % of candidates and misses some spans;
"lead" adjudicates their disagreements in a third file. The figures in the docs are this script's output.

Run: ``.venv/bin/python scripts/golden_walkthrough.py [--keep FOLDER]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
KB = ROOT / "src" / "ragaudit" / "demo_data" / "kb"
sys.path.insert(0, str(ROOT / "tests"))
PICK = [
    "acme-pricing-001",
    "acme-warranty-001",
    "acme-refund-001",
    "acme-security-001",
    "acme-unanswerable-001",
    "globex-pricing-001",
    "globex-refund-001",
    "globex-security-001",
    "globex-unanswerable-001",
    "initech-pricing-001",
    "initech-security-001",
    "initech-unanswerable-001",
]


def ragaudit(folder: Path, *args: str) -> str:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "RAGAUDIT_HISTORY": str(folder / ".history.sqlite")}
    print(f"$ ragaudit {' '.join(args)}")
    done = subprocess.run(
        [sys.executable, "-m", "ragaudit.cli.main", *args],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
    )
    print(done.stdout.rstrip() + (("\n" + done.stderr.rstrip()) if done.stderr.strip() else ""))
    print(f"(exit {done.returncode})\n")
    return done.stdout


def label(folder: Path, annotator: str, decide: Any, *extra: str) -> None:
    from label_fixtures import LabelServer

    srv = LabelServer(folder / "pool.jsonl", folder / "judgments" / f"{annotator}.jsonl", annotator, *extra)
    try:
        for case in srv.call("GET", "/api/pool")["cases"]:
            decide(srv, case)
    finally:
        srv.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", help="work in this folder (kept) instead of a temporary one")
    args = parser.parse_args()
    folder = Path(args.keep or tempfile.mkdtemp(prefix="golden-walk-"))
    if folder.exists() and any(folder.iterdir()):
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(KB / "corpus.jsonl", folder / "corpus.jsonl")
    expert = {
        json.loads(line)["id"]: json.loads(line) for line in (KB / "golden.jsonl").read_text().splitlines()
    }
    with (folder / "queries.jsonl").open("w") as out:
        for n, case_id in enumerate(PICK, start=1):
            out.write(
                json.dumps(
                    {
                        "id": f"q{n:03d}",
                        "query": expert[case_id]["query"],
                        "tenant_id": expert[case_id]["tenant_id"],
                    }
                )
                + "\n"
            )
    source = {f"q{n:03d}": expert[c] for n, c in enumerate(PICK, start=1)}
    ragaudit(
        folder,
        "pool",
        "--queries",
        "queries.jsonl",
        "--corpus",
        "corpus.jsonl",
        "--pipelines",
        "bm25,dense,hybrid",
        "--depth",
        "5",
        "--out",
        "pool.jsonl",
        "--no-progress",
    )

    rng = random.Random(14)

    def annotate(noisy: bool) -> Any:
        def decide(srv: Any, case: dict[str, Any]) -> None:
            truth = source[case["case_id"]]
            for cand in case["candidates"]:
                grade = int(truth["relevance"].get(cand["chunk_id"], 0))
                if noisy and rng.random() < 0.2:
                    grade = min(3, grade + 1) if grade < 2 else grade - 1
                superseded = grade == 0 and cand["metadata"].get("status") == "superseded"
                body = {
                    "case_id": case["case_id"],
                    "chunk_id": cand["chunk_id"],
                    "grade": grade,
                    "superseded": superseded,
                }
                srv.call("POST", "/api/judge", body)
                for span in truth.get("evidence", []):
                    if span["doc_id"] == cand["chunk_id"] and not (noisy and rng.random() < 0.3):
                        srv.call("POST", "/api/span", {**body, "start": span["start"], "end": span["end"]})
            if not truth["relevant_chunk_ids"]:
                srv.call("POST", "/api/unanswerable", {"case_id": case["case_id"], "value": True})

        return decide

    label(folder, "ana", annotate(noisy=False))
    label(folder, "bob", annotate(noisy=True))
    ragaudit(folder, "agreement", "judgments/ana.jsonl", "judgments/bob.jsonl", "--out", "agreement.json")
    report = json.loads((folder / "agreement.json").read_text())

    def adjudicate(srv: Any, case: dict[str, Any]) -> None:
        for d in report["disagreements"]:
            if d["case_id"] == case["case_id"]:
                grade = int(source[case["case_id"]]["relevance"].get(d["chunk_id"], 0))
                srv.call(
                    "POST", "/api/judge", {"case_id": d["case_id"], "chunk_id": d["chunk_id"], "grade": grade}
                )

    judged = [str(folder / "judgments" / f"{name}.jsonl") for name in ("ana", "bob")]
    label(folder, "lead", adjudicate, "--adjudicate", *judged)
    ragaudit(
        folder,
        "label",
        "merge",
        "judgments/ana.jsonl",
        "judgments/bob.jsonl",
        "judgments/lead.jsonl",
        "--into",
        "golden.jsonl",
        "--adjudicator",
        "lead",
    )
    ragaudit(folder, "validate", "golden.jsonl", "--corpus", "corpus.jsonl")
    for pipeline in ("bm25", "hybrid"):
        args = ["--corpus", "corpus.jsonl", "--pipeline", pipeline, "--out", f"{pipeline}.json"]
        ragaudit(folder, "eval", "--dataset", "golden.jsonl", *args, "--no-progress", "--no-history")
    ragaudit(folder, "power", "hybrid.json", "--baseline", "bm25.json", "--delta", "0.05")
    print(f"folder: {folder}")


if __name__ == "__main__":
    main()
