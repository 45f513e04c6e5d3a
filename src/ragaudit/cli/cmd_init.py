"""``ragaudit init``: scaffold golden set, pytest file, gate policy and CI workflow in a repository."""

from __future__ import annotations

import argparse

HELP = "scaffold tests/evals (golden set + pytest file), gates.toml and a CI workflow in a repository"


EXAMPLES = """\
ragaudit init              # in the repository to set up
ragaudit init path/to/repo
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", nargs="?", default=".", help="the repository folder (default: here)")


def run(args: argparse.Namespace) -> int:
    from ragaudit.templates import scaffold

    result = scaffold(args.dir)
    for path, what in result.written:
        print(f"created  {path}  - {what}")
    for path, _ in result.skipped:
        print(f"skipped  {path}  - exists, not overwritten")
    if result.written:
        print(
            "next: pytest tests/evals -v   # runs on the bundled demo until you point "
            "tests/evals/test_retrieval.py at your own data"
        )
    return 0
