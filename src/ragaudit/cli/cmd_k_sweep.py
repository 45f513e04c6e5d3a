"""``ragaudit k-sweep``: Recall@k, Precision@k and context tokens for k = 1..K from one run or report,
without re-querying anything."""

from __future__ import annotations

import argparse

from ragaudit.cli.argtypes import input_file, output_file, positive_int
from ragaudit.cli.common import (
    RUN_FORMAT_HELP,
    add_executor_options,
    add_format_and_split,
    add_policy_options,
    executor_from,
    policy_from,
)
from ragaudit.cli.outcome import add_outcome_options
from ragaudit.cli.results import print_result

HELP = "Recall@k, Precision@k and context tokens for k = 1..K from one report or run (no re-querying)"


EXAMPLES = """\
ragaudit k-sweep hybrid.json --max-k 20
ragaudit k-sweep --run run.trec --dataset golden.jsonl --corpus corpus.jsonl --metrics R,P,nDCG
"""
JSON_OUT = True
"""``--out -`` writes the JSON report to standard output."""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "report", nargs="?", type=input_file, help="an eval report (JSON from 'ragaudit eval --out')"
    )
    parser.add_argument(
        "--run", type=input_file, help="a TREC or JSONL run file instead of a report (needs --dataset)"
    )
    parser.add_argument(
        "--run-format", choices=["auto", "trec", "jsonl"], default="auto", help=RUN_FORMAT_HELP
    )
    parser.add_argument(
        "--dataset", help="golden JSONL, BEIR folder or qrels (a report's own dataset by default)"
    )
    add_format_and_split(parser, "with --run", "BEIR qrels split, with --run (default test)")
    parser.add_argument(
        "--corpus", help="contents by chunk id for the token counts (a report's own corpus by default)"
    )
    parser.add_argument(
        "--chunking",
        help="with --run: the run's chunking, STRATEGY[:SIZE[:OVERLAP]], e.g. recursive:256:32 "
        "(labels are projected onto those chunks; default whole documents)",
    )
    parser.add_argument(
        "--max-k", type=positive_int, help="largest k (default: the ranking depth, at most 20)"
    )
    parser.add_argument("--metrics", default="R,P", help="metric families to sweep (default R,P)")
    parser.add_argument(
        "--out", type=output_file, help="write the JSON artifact here (- for standard output)"
    )
    add_policy_options(parser)
    add_executor_options(parser)
    add_outcome_options(parser)  # a sweep of a failed run is no passing run: the rule of 'ragaudit eval'


def run(args: argparse.Namespace) -> int:
    from ragaudit.cli.outcome import exit_code, report_outcome, result_outcome
    from ragaudit.errors import InputError
    from ragaudit.experiments.k_sweep import parse_chunking, sweep_report, sweep_run

    families = args.metrics.split(",")
    if bool(args.report) == bool(args.run):
        raise InputError(
            "k-sweep", None, "give either a report or --run", "e.g. ragaudit k-sweep report.json"
        )
    if args.report:
        from ragaudit.evaluation.compare import load_report

        outcome = report_outcome(load_report(args.report).data, f"report {args.report}", "report")
        if args.chunking:
            raise InputError(
                "--chunking", None, "a report names its own chunking", "drop --chunking with a report"
            )
        with executor_from(args) as executor:
            result = sweep_report(
                args.report,
                dataset=args.dataset,
                corpus=args.corpus,
                max_k=args.max_k,
                families=families,
                executor=executor,
            )
    else:
        from ragaudit.corpus.loading import load_corpus
        from ragaudit.data.loading import load_dataset, load_run

        if not args.dataset:
            raise InputError("--run", None, "a run file needs the golden dataset", "add --dataset")
        policy = policy_from(args)
        from ragaudit.evaluation.evaluate import evaluate

        run = load_run(args.run, args.run_format)
        dataset = load_dataset(args.dataset, args.dataset_format, args.split, policy.relevance_threshold)
        outcome = result_outcome(evaluate(dataset, run, "R@1", policy), f"--run {args.run}", "run")
        with executor_from(args) as executor:
            result = sweep_run(
                run,
                dataset,
                policy,
                corpus=load_corpus(args.corpus) if args.corpus else None,
                chunking=parse_chunking(args.chunking) if args.chunking else None,
                max_k=args.max_k,
                families=families,
                executor=executor,
            )
    print_result(result, args.out)
    return exit_code([outcome], args.max_error_rate)
