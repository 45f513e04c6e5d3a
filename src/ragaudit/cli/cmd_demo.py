"""``ragaudit demo``: the main job on the bundled multi-tenant knowledge base, end to end."""

from __future__ import annotations

import argparse

HELP = "run bm25 / dense / hybrid on the bundled demo knowledge base"


EXAMPLES = """\
ragaudit demo                                   # bm25, dense, hybrid on the bundled data
ragaudit demo --pipelines bm25,hybrid --out-dir reports/quick
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out-dir", default="reports/demo", help="where the reports go (default reports/demo)"
    )
    parser.add_argument(
        "--pipelines",
        default="bm25,dense,hybrid",
        help="comma-separated presets or pipeline TOML files (default %(default)s)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args: argparse.Namespace) -> int:
    from importlib.resources import files

    from ragaudit.cli import cmd_bench

    kb = files("ragaudit") / "demo_data" / "kb"
    print(f"demo knowledge base: {kb}")
    # the bench command's own parser fills every default, so the demo never drifts from `ragaudit bench`
    bench_parser = argparse.ArgumentParser(prog="ragaudit bench", allow_abbrev=False)
    cmd_bench.configure(bench_parser)
    bench_args = bench_parser.parse_args(
        ["--dataset", str(kb / "golden.jsonl"), "--corpus", str(kb / "corpus.jsonl"), "--pipelines", args.pipelines,
         "--metrics", "nDCG@10,R@5,R@10,MRR@10,P@5", "--out-dir", args.out_dir]
        + (["--no-progress"] if args.no_progress else [])
    )  # fmt: skip
    code = cmd_bench.run(bench_args)
    if code != 0:
        return code
    return report_and_gate(args.out_dir)


def report_and_gate(out_dir: str) -> int:
    """Write one page per pipeline and the page comparing them all (ranked, winner, significance, cost,
    leaks, recommendation); gate the winner against the baseline with the policy ``ragaudit init``
    writes and show the verdict on the comparison page. The last line printed is that page's path.

    Returns the gate's exit code: 0 only when every gate passed, 1 when one failed or could not verify
    what it guards (unless the policy accepts that); the pages are written either way."""
    import json
    from importlib.resources import as_file, files
    from pathlib import Path

    from ragaudit.gates.policy import bundled_policy
    from ragaudit.gates.verdict import run_gates
    from ragaudit.report.bench_pages import write_bench_pages
    from ragaudit.report.terminal import render_terminal
    from ragaudit.report.view import dataset_queries

    out = Path(out_dir)
    benchmark = json.loads((out / "benchmark.json").read_text(encoding="utf-8"))
    with as_file(files("ragaudit") / "demo_data" / "kb" / "golden.jsonl") as golden:
        queries = dataset_queries(golden)
    ranking = benchmark.get("ranking") or {}
    winner = str(ranking.get("winner") or benchmark["pipelines"][0]["name"])
    baseline = str(benchmark["baseline"])
    verdict = run_gates(
        out / f"{winner}.json",
        bundled_policy(),
        baseline_path=out / f"{baseline}.json" if winner != baseline else None,
    )
    verdict.write_json(out / "verdict.json")
    pages, page = write_bench_pages(out, queries, gate=verdict.to_dict())
    print()
    print(render_terminal(verdict.to_dict()))
    print(f"pages per pipeline: {', '.join(str(out / p) for p in pages.values())}")
    what = f"comparison of all {len(pages)} pipelines" if len(pages) > 1 else "the pipeline's summary"
    print(f"{what} (open this): {page.resolve()}")
    return verdict.exit_code
