"""``ragaudit eval``: score a run (or a retriever) on a golden dataset; print a table, write a JSON report."""

from __future__ import annotations

import argparse

from ragaudit.cli.common import add_dataset_options, add_policy_options, policy_from

HELP = "evaluate a run file against a golden dataset"


def configure(parser: argparse.ArgumentParser) -> None:
    add_dataset_options(parser)
    parser.add_argument("--run", required=True, help="TREC run file or JSONL run")
    parser.add_argument("--run-format", choices=["auto", "trec", "jsonl"], default="auto")
    parser.add_argument(
        "--metrics",
        default=None,
        help="comma-separated metric names (default nDCG@10,R@5,R@10,R@100,P@5,MRR@10,MAP@100,Hit@5)",
    )
    parser.add_argument("--out", help="write the JSON report here")
    add_policy_options(parser)


def run(args: argparse.Namespace) -> int:
    from ragaudit.data.loading import load_dataset, load_run
    from ragaudit.evaluation.evaluate import evaluate
    from ragaudit.metrics.names import DEFAULT_METRICS, parse_metrics
    from ragaudit.report.table import eval_table

    policy = policy_from(args)
    specs = parse_metrics(args.metrics) if args.metrics else DEFAULT_METRICS
    dataset = load_dataset(args.dataset, args.dataset_format, args.split, policy.relevance_threshold)
    the_run = load_run(args.run, args.run_format)
    result = evaluate(dataset, the_run, specs, policy)
    print(eval_table(result))
    if args.out:
        result.write_json(args.out)
        print(f"report written to {args.out}")
    return 0
