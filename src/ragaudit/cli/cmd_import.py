"""``ragaudit import beir DIR --out OUT``: convert a BEIR folder into ragaudit's corpus and golden set."""

from __future__ import annotations

import argparse

from ragaudit.cli.argtypes import positive_int

HELP = "import a BEIR folder as OUT/corpus.jsonl and OUT/dataset.jsonl"


EXAMPLES = """\
ragaudit import beir path/to/msmarco --out data/msmarco
ragaudit import beir path/to/scifact --split dev --relevance-threshold 2 --out data/scifact
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("source_format", choices=["beir"], help="the format to import")
    parser.add_argument("path", help="the BEIR folder (corpus.jsonl, queries.jsonl, qrels/)")
    parser.add_argument("--out", required=True, help="output folder")
    parser.add_argument("--split", default="test", help="BEIR qrels split (default test)")
    parser.add_argument(
        "--relevance-threshold",
        type=positive_int,
        default=1,
        metavar="GRADE",
        help="a case with no qrel of grade >= GRADE is written as unanswerable (default 1)",
    )


def run(args: argparse.Namespace) -> int:
    from ragaudit.data.beir import import_beir

    summary = import_beir(args.path, args.out, args.split, args.relevance_threshold)
    print(
        f"wrote {summary['out']}/corpus.jsonl ({summary['documents']} documents) and "
        f"{summary['out']}/dataset.jsonl ({summary['cases']} cases, {summary['unanswerable']} with no relevant "
        f"item); left out {summary['queries_without_judgments']} queries without judgments"
    )
    return 0
