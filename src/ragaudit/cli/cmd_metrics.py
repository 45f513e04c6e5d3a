"""``ragaudit metrics``: list the metric names ragaudit understands."""

from __future__ import annotations

import argparse

HELP = "list metric names and what they mean"


EXAMPLES = """\
ragaudit metrics                     # every metric name and what it means
ragaudit metrics ndcg@10 recall@5    # check names and print them canonically
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="*", help="names to check (parse and print canonically)")


def run(args: argparse.Namespace) -> int:
    from ragaudit.metrics.names import EXAMPLES, FAMILIES, parse_metric

    if args.names:
        for name in args.names:
            print(parse_metric(name).name)
        return 0
    for family, meaning in FAMILIES.items():
        print(f"{family:6} {meaning}")
    print("examples: " + ", ".join(EXAMPLES))
    return 0
