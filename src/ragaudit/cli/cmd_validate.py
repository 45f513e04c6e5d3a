"""``ragaudit validate``: report every problem of a dataset, or of a run file, at once, each with
file:line and the fix. A run file (TREC, six fields a line; JSONL with ``retrieved`` lists) is detected
and checked as a run, not read as qrels."""

from __future__ import annotations

import argparse
from pathlib import Path

from ragaudit.cli.common import add_format_and_split
from ragaudit.errors import Problem

HELP = (
    "check a golden dataset or a run file (and its ids against a corpus, and that corpus); exit 1 on errors"
)


EXAMPLES = """\
ragaudit validate golden.jsonl --corpus corpus.jsonl
ragaudit validate path/to/beir-folder --dataset-format beir --split dev
ragaudit validate run.trec --dataset golden.jsonl --corpus corpus.jsonl   # a run file, checked as a run
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "path", help="golden JSONL, BEIR folder or TREC qrels file; or a run file (TREC or JSONL, detected)"
    )
    parser.add_argument("--corpus", help="corpus JSONL or BEIR folder to check ids against")
    parser.add_argument(
        "--run-format",
        choices=["auto", "trec", "jsonl", "none"],
        default="auto",
        help="read PATH as a run file of this format (auto: detected; none: always as a dataset)",
    )
    parser.add_argument("--dataset", help="with a run file: the dataset whose case ids it should answer")
    add_format_and_split(parser)


UNCHECKED_WITHOUT_CORPUS = (
    "the ids against a corpus (that each exists, and that each labelled one belongs to its case's tenant)"
)
RUN_UNCHECKED_WITHOUT_CORPUS = "the result ids against a corpus (that each names a document or chunk of it)"
RUN_UNCHECKED_WITHOUT_DATASET = (
    "the case ids against a dataset (that the run shares cases with it, which it leaves unanswered)"
)


def run(args: argparse.Namespace) -> int:
    from ragaudit.data.validate import validate_dataset
    from ragaudit.data.validate_run import detect_run_file, validate_run

    kind = None
    if args.run_format in ("trec", "jsonl"):
        kind = args.run_format
    elif args.run_format == "auto" and args.dataset_format == "auto":
        kind = detect_run_file(args.path)
    if kind is not None:
        problems, summary = validate_run(args.path, kind, args.corpus, args.dataset)
        print(f"{args.path}: read as a {summary} (--run-format none reads it as a dataset)")
    else:
        if args.dataset:
            from ragaudit.errors import InputError

            raise InputError("--dataset", None, "is for a run file; PATH is a dataset", "drop --dataset")
        problems = validate_dataset(args.path, args.corpus, args.dataset_format, args.split)
    corpus_problems = _corpus_problems(args.corpus)
    problems = corpus_problems + [p for p in problems if p not in corpus_problems]
    errors = [p for p in problems if p.severity == "error"]
    for problem in problems:
        print(("error: " if problem.severity == "error" else "") + str(problem))
    warnings = len(problems) - len(errors)
    checked = f"{args.path} and {args.corpus}" if corpus_problems else args.path
    print(f"{checked}: {len(errors)} error(s), {warnings} warning(s)")
    for unchecked in _unchecked(args, is_run=kind is not None):  # 0 errors covers only what was checked
        print(f"not checked: {unchecked}")
    return 1 if errors else 0


def _unchecked(args: argparse.Namespace, *, is_run: bool) -> list[str]:
    """What this validation did not check for want of an input, each with the option that adds it."""
    if not is_run:
        return [] if args.corpus else [f"{UNCHECKED_WITHOUT_CORPUS} (pass --corpus)"]
    missing = [] if args.corpus else [f"{RUN_UNCHECKED_WITHOUT_CORPUS} (pass --corpus)"]
    return missing + ([] if args.dataset else [f"{RUN_UNCHECKED_WITHOUT_DATASET} (pass --dataset)"])


def _corpus_problems(corpus: str | None) -> list[Problem]:
    """The corpus's own problems, as ``eval --corpus`` would refuse it (missing tenant, duplicate id,
    invalid status, ...): the ids of a corpus that cannot be loaded are no ground to call labels clean."""
    if corpus is None or not Path(corpus).exists():
        return []  # a missing corpus is the dataset or run check's input error
    from ragaudit.corpus.loading import read_corpus

    return read_corpus(corpus)[1]
