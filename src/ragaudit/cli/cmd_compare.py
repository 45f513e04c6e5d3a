"""``ragaudit compare``: paired significance of several eval reports against a baseline."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ragaudit.cli.argtypes import input_file, output_file, positive_int, probability
from ragaudit.cli.common import SEED_HELP
from ragaudit.cli.console import shown
from ragaudit.cli.judged_options import add_holes_options, add_power_options
from ragaudit.cli.outcome import add_outcome_options

if TYPE_CHECKING:
    from ragaudit.evaluation.compare import LoadedReport

HELP = "compare eval reports: deltas, CIs, corrected p-values and significance"


EXAMPLES = """\
ragaudit compare bm25.json hybrid.json                      # first report is the baseline
ragaudit compare bm25.json dense.json hybrid.json --metrics nDCG@10 --alpha 0.01 --out compare.json
"""
JSON_OUT = True
"""``--out -`` writes the JSON report to standard output."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "reports", nargs="+", type=input_file, help="eval reports (JSON written by 'ragaudit eval --out')"
    )
    parser.add_argument("--baseline", type=input_file, help="the baseline report (default: the first one)")
    parser.add_argument("--metrics", help="comma-separated metrics (default: all metrics the reports share)")
    parser.add_argument(
        "--alpha", type=probability, default=0.05, help="significance level, in (0, 1) (default 0.05)"
    )
    parser.add_argument(
        "--resamples", type=positive_int, default=10_000, help="randomization and bootstrap resamples"
    )
    parser.add_argument("--seed", type=int, default=0, help=SEED_HELP)
    parser.add_argument(
        "--out", type=output_file, help="write the comparison JSON here (- for standard output)"
    )
    add_holes_options(parser)
    add_power_options(parser)
    add_outcome_options(parser)  # a report of a failed run makes no verdict: the rule of 'ragaudit eval'


def run(args: argparse.Namespace) -> int:
    from ragaudit.artifacts.envelope import write_artifact
    from ragaudit.cli.judged_options import check_delta, holes_exit
    from ragaudit.cli.outcome import exit_code, report_outcome
    from ragaudit.evaluation.compare import compare_reports, load_report
    from ragaudit.evaluation.slices import with_tenant_comparisons
    from ragaudit.metrics.names import parse_metrics
    from ragaudit.report.terminal import render_terminal

    check_delta(args.delta)
    paths = list(dict.fromkeys([*([args.baseline] if args.baseline else []), *args.reports]))
    reports = [load_report(p) for p in paths]
    labels = [r.label for r in reports]
    if len(set(labels)) != len(labels):  # two runs with the same name: tell them apart by file name
        reports = [load_report(p, Path(p).stem) for p in paths]
    metrics = [m.name for m in parse_metrics(args.metrics)] if args.metrics else None
    result = compare_reports(
        reports,
        reports[0],
        metrics,
        args.alpha,
        args.resamples,
        args.seed,
        delta=args.delta,
        power=args.power,
        min_judged=args.min_judged,
        max_error_rate=args.max_error_rate,
    )
    result = with_tenant_comparisons(result, reports, reports[0])
    print(render_terminal(result))
    if args.out:
        write_artifact(result, args.out)
        print(f"comparison written to {shown(args.out)}")
    outcomes = [report_outcome(r.data, f"report {r.label}", "report") for r in reports]
    return max(
        exit_code(outcomes, args.max_error_rate),
        holes_exit(args, result["holes"]),
        _edited_exit(reports),
    )


def _edited_exit(reports: Sequence[LoadedReport]) -> int:
    """1 (each problem printed) when a report's case records do not account for its figures (a report
    edited by hand: cases removed or listed twice, values blanked, leaks hidden), else 0."""
    from ragaudit.evaluation.integrity import report_inconsistencies

    problems = [(r.label, p) for r in reports for p in report_inconsistencies(r.data)]
    for label, problem in problems:
        print(f"FAILED report {label}: {problem}", file=sys.stderr)
    return 1 if problems else 0
