"""``ragaudit history``: the trend of chosen metrics per dataset and pipeline, from the run history."""

from __future__ import annotations

import argparse

from ragaudit.cli.argtypes import output_file, positive_int

HELP = "show the trend of metrics across recorded runs (terminal sparklines, --html for a plot)"


EXAMPLES = """\
ragaudit history --metric nDCG@10
ragaudit history --metric nDCG@10,R@5 --pipeline hybrid --last 20 --html history.html
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="NAME",
        help="a metric to show, e.g. nDCG@10 (repeatable or comma-separated; default nDCG@10, R@5, MRR@10)",
    )
    parser.add_argument("--dataset", help="only runs on this dataset: its file, a sha256 prefix or its path")
    parser.add_argument("--pipeline", help="only runs of this pipeline / run name")
    parser.add_argument(
        "--last",
        type=positive_int,
        default=30,
        help="newest runs per pipeline in sparklines and plots (default 30)",
    )
    parser.add_argument(
        "--html", type=output_file, metavar="FILE", help="also write an offline HTML page with line plots"
    )
    parser.add_argument(
        "--record",
        nargs="+",
        default=[],
        metavar="REPORT",
        help="first record these eval reports (JSON) in the history",
    )
    parser.add_argument(
        "--history",
        metavar="FILE",
        help="the history file (default $RAGAUDIT_HISTORY, else .ragaudit/history.sqlite at the git top-level)",
    )


def run(args: argparse.Namespace) -> int:
    from pathlib import Path

    from ragaudit.artifacts.history import default_history_path, open_history, series
    from ragaudit.errors import InputError
    from ragaudit.evaluation.compare import load_report
    from ragaudit.evaluation.integrity import report_inconsistencies
    from ragaudit.metrics.names import parse_metrics
    from ragaudit.report.history_view import render_html, render_terminal

    metrics = [m.name for m in parse_metrics(",".join(args.metric))] if args.metric else None
    path = Path(args.history) if args.history else default_history_path()
    loaded = [load_report(report) for report in args.record]
    for report in loaded:  # a hand-edited report would put figures no run earned in the trends
        if problems := report_inconsistencies(report.data):
            raise InputError(
                report.path, None, f"not recorded: {problems[0]}", "record the report as written"
            )
    with open_history(path, create=bool(args.record)) as history:
        for report in loaded:
            run_id = history.record(report.data)
            print(f"recorded {report.path} as run {run_id}")
        runs = history.runs(dataset=args.dataset, pipeline=args.pipeline, metrics=metrics)
    groups = series(runs)
    print(f"history: {path} ({len(runs)} matching run{'s' if len(runs) != 1 else ''})")
    print(render_terminal(groups, metrics, args.last))
    if args.html:
        out = Path(args.html)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(render_html(groups, metrics, str(path), args.last), encoding="utf-8")
        print(f"history plot written to {out}")
    return 0
