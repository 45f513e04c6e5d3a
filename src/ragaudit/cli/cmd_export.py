"""``ragaudit export mlflow REPORT.json``: log a report to MLflow, one run per pipeline."""

from __future__ import annotations

import argparse
import sys

from ragaudit.cli.argtypes import input_file

HELP = "log a JSON report to an experiment tracker (mlflow): one run per pipeline"

EXAMPLES = """\
ragaudit export mlflow report.json                      # MLFLOW_TRACKING_URI, experiment "ragaudit"
ragaudit export mlflow bench.json --experiment retrieval --tracking-uri file:./mlruns
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", choices=["mlflow"], help="where to log: mlflow")
    parser.add_argument(
        "report", type=input_file, help="an eval report (ragaudit eval --out) or a benchmark report"
    )
    parser.add_argument("--experiment", default="ragaudit", help="MLflow experiment name (default ragaudit)")
    parser.add_argument(
        "--tracking-uri",
        help="MLflow tracking URI (default: MLFLOW_TRACKING_URI, else MLflow's own default)",
    )
    parser.add_argument("--no-html", action="store_true", help="do not attach the HTML report")


def run(args: argparse.Namespace) -> int:
    from ragaudit.artifacts.envelope import read_report
    from ragaudit.report.kinds import registered_kinds
    from ragaudit.report.mlflow_export import export_to_mlflow, html_page

    report = read_report(args.report, registered_kinds())
    html = None if args.no_html else html_page(report, args.report)
    run_ids = export_to_mlflow(
        report, html=html, experiment=args.experiment, tracking_uri=args.tracking_uri, where=args.report
    )
    for run_id in run_ids:
        print(run_id)
    print(f"export: {len(run_ids)} MLflow run(s) logged to experiment {args.experiment!r}", file=sys.stderr)
    return 0
