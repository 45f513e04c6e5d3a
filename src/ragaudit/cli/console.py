"""What a command says while it works: the ``--quiet`` switch, steps announced on stderr, and
``--out -`` (the JSON report on standard output, everything else on stderr).

Only the command line sets these (``ragaudit.cli.main``); library code never prints through them.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

STDOUT = "-"
"""``--out -``: write the JSON report to standard output."""

SLOW_S = 2.0
"""A step that took longer than this says how long it took when it ends."""

_state: dict[str, bool] = {"quiet": False}
_shown: dict[str, str] = {}


def set_quiet(quiet: bool) -> None:
    _state["quiet"] = quiet


def quiet() -> bool:
    return _state["quiet"]


def note(message: str) -> None:
    """A line about what is running, on stderr (silent with ``--quiet``)."""
    if not _state["quiet"]:
        print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def step(what: str) -> Iterator[None]:
    """Announce ``what`` on stderr before it runs, and its duration after when it took over ~2 s, so no
    command is silent for long (a progress bar, where there is one, counts the cases in between)."""
    note(f"{what} ...")
    start = time.perf_counter()
    yield
    took = time.perf_counter() - start
    if took > SLOW_S:
        note(f"{what}: done in {took:.1f} s")


def shown(path: str) -> str:
    """How to name an output path in messages (``standard output`` for ``--out -``)."""
    return _shown.get(path, path)


@contextlib.contextmanager
def json_to_stdout(real_stdout: TextIO) -> Iterator[str]:
    """For ``--out -``: a temporary file to write the report to (its path is yielded), with everything
    the command prints sent to stderr; the report is copied to ``real_stdout`` at the end, so standard
    output holds the JSON and nothing else."""
    with tempfile.TemporaryDirectory(prefix="ragaudit-out-") as folder:
        target = str(Path(folder) / "report.json")
        _shown[target] = "standard output"
        try:
            with contextlib.redirect_stdout(sys.stderr):
                yield target
        finally:
            _shown.pop(target, None)
            if Path(target).is_file():
                real_stdout.write(Path(target).read_text(encoding="utf-8"))
                real_stdout.flush()
