"""How a command ends: its result's table on standard output, the JSON report where ``--out`` says,
and, for the commands that ran pipelines, the exit code of the rule of :mod:`ragaudit.cli.outcome`."""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Protocol

from ragaudit.cli.console import shown


class Reportable(Protocol):
    """A result that is a report: ``to_dict()`` for the terminal table, ``write_json()`` for the file."""

    def to_dict(self) -> Mapping[str, Any]: ...

    def write_json(self, path: str | Path) -> None: ...


def print_result(
    result: Reportable, out: str | None = None, *, written: str = "written to", limit: int | None = None
) -> None:
    """Print ``result``'s table (lists cut at ``limit`` items, else the renderer's default) and, with
    ``out``, write its JSON there and say so (``{written} {path}``)."""
    from ragaudit.report.terminal import render_terminal

    report = result.to_dict()
    print(render_terminal(report) if limit is None else render_terminal(report, limit=limit))
    if out:
        result.write_json(out)
        print(f"{written} {shown(out)}")


def pipelines_exit_code(args: argparse.Namespace, runs: Iterable[tuple[Any, str]]) -> int:
    """The exit code of the rule of :mod:`ragaudit.cli.outcome` (``--max-error-rate``) over every
    pipeline an experiment ran: ``(its EvalResult, its label)`` each."""
    from ragaudit.cli.outcome import exit_code, result_outcome

    return exit_code(
        [result_outcome(result, label, "pipeline") for result, label in runs], args.max_error_rate
    )
