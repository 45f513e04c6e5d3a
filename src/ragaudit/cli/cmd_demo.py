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
    bench_parser = argparse.ArgumentParser(prog="ragaudit bench")
    cmd_bench.configure(bench_parser)
    bench_args = bench_parser.parse_args(
        ["--dataset", str(kb / "golden.jsonl"), "--corpus", str(kb / "corpus.jsonl"), "--pipelines", args.pipelines,
         "--metrics", "nDCG@10,R@5,R@10,MRR@10,P@5", "--out-dir", args.out_dir]
        + (["--no-progress"] if args.no_progress else [])
    )  # fmt: skip
    code = cmd_bench.run(bench_args)
    if code != 0:
        return code
    return report_and_gate(args.out_dir, [p.strip() for p in args.pipelines.split(",") if p.strip()])


def report_and_gate(out_dir: str, pipelines: list[str]) -> int:
    """Gate the last pipeline against the first with the policy ``ragaudit init`` writes, then write
    the HTML report of the last pipeline with the verdict in it; print both."""
    import json
    from pathlib import Path

    from ragaudit.gates.policy import bundled_policy
    from ragaudit.gates.verdict import run_gates
    from ragaudit.pipelines.config import resolve_pipeline
    from ragaudit.report.html import render_html
    from ragaudit.report.view import build_view

    out = Path(out_dir)
    names = [resolve_pipeline(p).name for p in pipelines]
    candidate, baseline = out / f"{names[-1]}.json", out / f"{names[0]}.json"
    has_baseline = len(names) > 1
    verdict = run_gates(candidate, bundled_policy(), baseline_path=baseline if has_baseline else None)
    verdict.write_json(out / "verdict.json")
    report = {**json.loads(candidate.read_text(encoding="utf-8")), "gate": verdict.to_dict()}
    base = json.loads(baseline.read_text(encoding="utf-8")) if has_baseline else None
    view = build_view(report, base, report_path=str(candidate), baseline_path=names[0])
    html = out / "report.html"
    html.write_text(render_html(view), encoding="utf-8")
    print()
    from ragaudit.report.terminal import render_terminal

    print(render_terminal(verdict.to_dict()))
    print(f"HTML report: {html.resolve()}")
    return 0
