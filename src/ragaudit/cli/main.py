"""Entry point of the ``ragaudit`` command.

Each command lives in its own module ``cmd_<name>.py`` exposing ``HELP``, ``EXAMPLES`` (shown at the
end of its ``--help``), ``configure(parser)`` and ``run(args) -> int`` (found automatically;
``cmd_audit_tenants`` is ``ragaudit audit-tenants``); a module whose ``--out`` is a JSON report sets
``JSON_OUT = True`` and gets ``--out -`` (the JSON on standard output, nothing else there). Every command
also gets ``--quiet``. Heavy imports happen inside ``run`` so ``ragaudit --help`` stays fast.
Exit codes: 0 success, 1 the check failed (validation errors, a failed gate, a run that failed under
the rule of :mod:`ragaudit.cli.outcome`), 2 bad usage or input (options are range-checked at parse time
by :mod:`ragaudit.cli.argtypes`).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
import time
from collections.abc import Sequence
from importlib import import_module
from types import ModuleType
from typing import TextIO, cast

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


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with ``only`` (a command's name), that command alone, so running one
    command does not import and configure every other (``ragaudit --help`` still lists them all)."""
    # allow_abbrev=False everywhere: an unknown option is an error, never taken as the prefix of another
    # (``bench --out -`` once wrote a folder named "-" as ``--out-dir -``)
    parser = argparse.ArgumentParser(
        prog="ragaudit", description="Audit the retrieval half of RAG systems.", allow_abbrev=False
    )
    parser.add_argument("--version", action="version", version=f"ragaudit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in [only] if only is not None else command_names():
        module = import_module(f"ragaudit.cli.cmd_{name}")
        command = sub.add_parser(
            name.replace("_", "-"), help=module.HELP, description=module.HELP, allow_abbrev=False
        )
        module.configure(command)
        command.add_argument(
            "-q",
            "--quiet",
            action="store_true",
            help="print nothing but warnings and errors (stderr)"
            + (" and, with --out -, the JSON" if getattr(module, "JSON_OUT", False) else "")
            + "; no progress",
        )
        _add_examples(command, module)
        command.set_defaults(
            handler=module.run,
            json_out=getattr(module, "JSON_OUT", False),
            watched=getattr(module, "WATCHED", True),
        )
    return parser


def _add_examples(command: argparse.ArgumentParser, module: ModuleType) -> None:
    """Put the module's ``EXAMPLES`` at the end of the command's ``--help``, before any epilog it set."""
    lines = [f"  {line}" if line else "" for line in module.EXAMPLES.strip("\n").splitlines()]
    command.epilog = "\n\n".join(p for p in ("examples:\n" + "\n".join(lines), command.epilog) if p)
    command.formatter_class = argparse.RawDescriptionHelpFormatter


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
        # --retriever haystack:... and export mlflow: no usage telemetry either (set them to allow it)
        ("HAYSTACK_TELEMETRY_ENABLED", "False"),
        ("MLFLOW_DISABLE_TELEMETRY", "true"),
    ):
        os.environ.setdefault(key, value)


def _importable_cwd() -> None:
    """Modules in the current directory can be named (``--retriever mypkg.search:make_retriever``, a
    stage ``type = "my_stages:Factory"``) as with ``python -m``; appended, so installed packages win."""
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.append(cwd)


def main(argv: Sequence[str] | None = None) -> int:
    _quiet_offline_environment()
    _importable_cwd()
    words = list(sys.argv[1:] if argv is None else argv)
    first = words[0].replace("-", "_") if words else ""
    parser = build_parser(first if first in command_names() else None)
    try:
        args = parser.parse_args(words)
    except SystemExit as exc:  # --help, --version (0) or a usage error (2): a code, never an exception
        return exc.code if isinstance(exc.code, int) else 2
    if getattr(args, "handler", None) is None:
        parser.print_help()
        return 2
    try:
        return _run(args)
    except ValidationError as exc:
        for problem in exc.problems:
            print(f"error: {problem}", file=sys.stderr)
        print(  # every problem is listed above; validate reads datasets, run files and corpora only
            f"{len(exc.problems)} problem(s), each listed above with its fix ('ragaudit validate' also "
            "checks a golden set, a run file or a corpus on its own, warnings included)",
            file=sys.stderr,
        )
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


def _run(args: argparse.Namespace) -> int:
    """Run the command: ``--quiet`` silences standard output and progress; ``--out -`` sends the JSON
    report to standard output and everything else the command prints to stderr."""
    from ragaudit.cli import console
    from ragaudit.cli.pipe_safe import PipeSafeStdout

    console.set_quiet(args.quiet)
    if args.quiet and hasattr(args, "no_progress"):
        args.no_progress = True
    stdout = PipeSafeStdout(sys.stdout)  # a reader that went away (| head) does not end the command
    with contextlib.ExitStack() as stack:
        stack.callback(stdout.flush)
        stack.enter_context(contextlib.redirect_stdout(cast(TextIO, stdout)))
        if args.json_out and getattr(args, "out", None) == console.STDOUT:
            args.out = stack.enter_context(console.json_to_stdout(sys.stdout))
        if args.quiet:
            stack.enter_context(contextlib.redirect_stdout(io.StringIO()))
        if args.watched:  # never silent for long (console.watching); a server (label) opts out
            progress = False if getattr(args, "no_progress", False) else None
            stack.enter_context(console.watching(args.command, progress=progress))
        started = time.perf_counter()
        code: int = args.handler(args)
        took = time.perf_counter() - started
        if took > console.SLOW_S:
            console.note(f"{args.command}: finished in {took:.1f} s (exit {code})")
        return code


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
