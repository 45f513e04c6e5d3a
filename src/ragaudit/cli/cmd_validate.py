"""``ragaudit validate``: report every problem of a dataset at once, each with file:line and the fix."""

from __future__ import annotations

import argparse

from ragaudit.cli.common import add_format_and_split

HELP = "check a golden dataset (and its ids against a corpus); exit 1 on errors"


EXAMPLES = """\
ragaudit validate golden.jsonl --corpus corpus.jsonl
ragaudit validate path/to/beir-folder --dataset-format beir --split dev
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", help="golden JSONL, BEIR folder or TREC qrels file")
    parser.add_argument("--corpus", help="corpus JSONL or BEIR folder to check ids against")
    add_format_and_split(parser)


def run(args: argparse.Namespace) -> int:
    from ragaudit.data.validate import validate_dataset

    problems = validate_dataset(args.path, args.corpus, args.dataset_format, args.split)
    errors = [p for p in problems if p.severity == "error"]
    for problem in problems:
        print(("error: " if problem.severity == "error" else "") + str(problem))
    warnings = len(problems) - len(errors)
    print(f"{args.path}: {len(errors)} error(s), {warnings} warning(s)")
    return 1 if errors else 0
