"""Entry point of the ``ragaudit`` command.

Each command lives in its own module ``cmd_<name>.py`` exposing ``HELP``, ``configure(parser)`` and
``run(args) -> int`` (found automatically; ``cmd_audit_tenants`` is ``ragaudit audit-tenants``); heavy imports happen inside ``run`` so ``ragaudit --help`` stays fast.
Exit codes: 0 success, 1 the check failed (validation errors, a failed gate, a run that failed under
the rule of :mod:`ragaudit.cli.outcome`), 2 bad usage or input (options are range-checked at parse time
by :mod:`ragaudit.cli.argtypes`).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from importlib import import_module

from ragaudit.errors import RagauditError, ValidationError
from ragaudit.version import __version__

FIRST = ("demo", "eval", "bench", "compare")
"""Shown first in ``--help``; every other ``cmd_*`` module follows in alphabetical order."""


def command_names() -> list[str]:
    """Every command: one ``ragaudit.cli.cmd_<name>`` module each (``-`` in a name is ``_`` in its module)."""
    import pkgutil

    import ragaudit.cli

    found = sorted(
        m.name[4:] for m in pkgutil.iter_modules(ragaudit.cli.__path__) if m.name.startswith("cmd_")
    )
    return [n for n in FIRST if n in found] + [n for n in found if n not in FIRST]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ragaudit", description="Audit the retrieval half of RAG systems.")
    parser.add_argument("--version", action="version", version=f"ragaudit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in command_names():
        module = import_module(f"ragaudit.cli.cmd_{name}")
        command = sub.add_parser(name.replace("_", "-"), help=module.HELP, description=module.HELP)
        module.configure(command)
        command.set_defaults(handler=module.run)
    return parser


def _quiet_offline_environment() -> None:
    """Offline and quiet by default for the command line (a library never touches these)."""
    for key, value in (
        ("HF_HUB_OFFLINE", "1"),
        ("TRANSFORMERS_OFFLINE", "1"),
        ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
        ("TRANSFORMERS_VERBOSITY", "error"),
        ("TOKENIZERS_PARALLELISM", "false"),
        # --executor ray: no usage statistics sent to Ray's servers (set it to 1 to allow them)
        ("RAY_USAGE_STATS_ENABLED", "0"),
    ):
        os.environ.setdefault(key, value)


def main(argv: Sequence[str] | None = None) -> int:
    _quiet_offline_environment()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version (0) or a usage error (2): a code, never an exception
        return exc.code if isinstance(exc.code, int) else 2
    if getattr(args, "handler", None) is None:
        parser.print_help()
        return 2
    try:
        code: int = args.handler(args)
        return code
    except ValidationError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        print(f"{len(exc.problems)} problem(s); run 'ragaudit validate' for a full list", file=sys.stderr)
        return 2
    except RagauditError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except IsADirectoryError as exc:
        print(
            f"error: {exc.filename}: is a directory, expected a file (name the file inside it)",
            file=sys.stderr,
        )
        return 2
    except OSError as exc:  # unreadable or unwritable paths: say which, never a traceback
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"error: {where}{exc.strerror or exc} (check the path and its permissions)", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
