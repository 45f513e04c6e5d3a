"""Options shared by several commands."""

from __future__ import annotations

import argparse

from ragaudit.metrics.policy import Policy


def add_policy_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--gain",
        choices=["exponential", "linear"],
        default="exponential",
        help="nDCG gain: exponential 2^rel-1 (default) or linear rel (trec_eval / BEIR)",
    )
    parser.add_argument(
        "--relevance-threshold",
        type=int,
        default=1,
        metavar="GRADE",
        help="where only grades are given, relevant means grade >= GRADE (default 1)",
    )


def policy_from(args: argparse.Namespace) -> Policy:
    return Policy(gain=args.gain, relevance_threshold=args.relevance_threshold)


def add_dataset_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dataset", required=True, help="golden JSONL, BEIR folder or TREC qrels file")
    parser.add_argument(
        "--dataset-format",
        choices=["auto", "jsonl", "beir", "qrels"],
        default="auto",
        help="format of --dataset (default: detected)",
    )
    parser.add_argument("--split", default="test", help="BEIR qrels split (default test)")
