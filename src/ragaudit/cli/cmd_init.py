"""``ragaudit init``: scaffold golden set, pytest file, gate policy and CI workflow in a repository."""

from __future__ import annotations

import argparse

HELP = "scaffold tests/evals (golden set + pytest file), gates.toml and a CI workflow in a repository"

EXAMPLES = """\
ragaudit init              # in the repository to set up (builds vendor/ragaudit-*.whl for the CI)
ragaudit init path/to/repo --install "ragaudit[bm25] @ git+https://github.com/you/ragaudit"
"""


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("dir", nargs="?", default=".", help="the repository folder (default: here)")
    parser.add_argument(
        "--install",
        metavar="SPEC",
        help="what the CI workflow pip-installs ragaudit from: a wheel or path in the repository, or a "
        "pip requirement (default: a wheel of this ragaudit, built offline into DIR/vendor/)",
    )


def run(args: argparse.Namespace) -> int:

    from ragaudit.templates import EXTRAS, VENDOR, build_wheel, repository_folder, scaffold

    root = repository_folder(args.dir)
    install = args.install
    if install is None:
        wheel = build_wheel(root / VENDOR)
        install = f"{wheel.relative_to(root).as_posix()}[{EXTRAS}]"
        print(f"built    {wheel}  - the ragaudit wheel the CI workflow installs (commit it)")
    result = scaffold(args.dir, install)
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
