"""``ragaudit report``: render a JSON report as Markdown (a PR comment) or one self-contained HTML file."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ragaudit.cli.argtypes import input_file, output_file, positive_int, probability
from ragaudit.cli.common import SEED_HELP, add_format_and_split

HELP = "render a report as Markdown (PR comment) or a self-contained HTML page, optionally vs a baseline"


EXAMPLES = """\
ragaudit report hybrid.json --baseline bm25.json --format html --out report.html
ragaudit report hybrid.json --format md > comment.md
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "report", type=input_file, help="a JSON report (ragaudit eval --out, compare --out, bench)"
    )
    parser.add_argument(
        "--baseline", type=input_file, help="an eval report of the baseline system, same dataset and policy"
    )
    parser.add_argument("--format", choices=["md", "html"], default="md", help="md (default) or html")
    parser.add_argument("--out", type=output_file, help="write here (default, or -: standard output)")
    parser.add_argument("--dataset", help="the golden dataset, to show each query's text")
    add_format_and_split(parser)
    parser.add_argument(
        "--alpha", type=probability, default=0.05, help="significance level against the baseline"
    )
    parser.add_argument(
        "--resamples", type=positive_int, default=10_000, help="bootstrap and randomization resamples"
    )
    parser.add_argument("--seed", type=int, default=0, help=SEED_HELP)


def run(args: argparse.Namespace) -> int:
    from ragaudit.artifacts.envelope import read_report
    from ragaudit.report.kinds import registered_kinds
    from ragaudit.report.view import build_view, dataset_queries

    kinds = registered_kinds()
    report = read_report(args.report, kinds)
    baseline = read_report(args.baseline, kinds) if args.baseline else None
    queries = None
    if args.dataset:
        expected = (
            report.get("dataset", {}).get("sha256") if isinstance(report.get("dataset"), dict) else None
        )
        queries = dataset_queries(args.dataset, args.dataset_format, args.split, expected)
    view = build_view(
        report,
        baseline,
        report_path=args.report,
        baseline_path=args.baseline or "baseline",
        queries=queries,
        resamples=args.resamples,
        alpha=args.alpha,
        seed=args.seed,
    )
    if args.format == "html":
        from ragaudit.report.html import render_html

        text = render_html(view)
    else:
        from ragaudit.report.markdown import render_markdown

        text = render_markdown(view)
    if args.out and args.out != "-":
        target = Path(args.out)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        print(f"{args.format} report written to {target}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0
