"""What a command says while it works: the ``--quiet`` switch, steps announced on stderr, and
``--out -`` (the JSON report on standard output, everything else on stderr).

No command is silent for long (docs/cli.md, "What a command says before and after"): :func:`watching`
runs a small watcher thread for the whole command that speaks on stderr when nothing has been said
for ``FIRST_S`` seconds at the start, then for ``EVERY_S`` seconds: it names the current :func:`step`,
how long it has run and, when a counter is open (:mod:`ragaudit.counters`), how far it is
(``audit-tenants: building pipeline hybrid over corpus.jsonl: still running, 10 s``). Off a terminal,
or with ``--no-progress``, that is one line each time; on a terminal, inside a step, it is a status
line rewritten in place and cleared when the step ends (and nothing while a progress bar is drawing).

Only the command line sets these (``ragaudit.cli.main``); library code never prints through them.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

STDOUT = "-"
"""``--out -``: write the JSON report to standard output."""

SLOW_S = 2.0
"""A step that took longer than this says how long it took when it ends."""

FIRST_S = 1.5
"""A command that has said nothing this long after it started says what it is doing."""
EVERY_S = 4.0
"""After that, the longest silence before the watcher speaks again (the promise is 5 s; the margin
absorbs a tick and a busy machine scheduling the thread late)."""
TICK_S = 0.2
"""How often the watcher looks."""

_state: dict[str, bool] = {"quiet": False}
_shown: dict[str, str] = {}


def set_quiet(quiet: bool) -> None:
    _state["quiet"] = quiet


def quiet() -> bool:
    return _state["quiet"]


def note(message: str) -> None:
    """A line about what is running, on stderr (silent with ``--quiet``)."""
    if not _state["quiet"]:
        watcher = _watch.get("current")
        if watcher is not None:
            watcher.spoke()
        print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def step(what: str) -> Iterator[None]:
    """Announce ``what`` on stderr before it runs, and its duration after when it took over ~2 s; while
    it runs, the command's watcher names it when it speaks (:func:`watching`)."""
    watcher = _watch.get("current")
    if watcher is not None:
        watcher.enter(what)  # before the line, so the watcher never names the step before this one
    start = time.perf_counter()
    try:
        note(f"{what} ...")
        yield
    finally:
        if watcher is not None:
            watcher.leave(what)
    took = time.perf_counter() - start
    if took > SLOW_S:
        note(f"{what}: done in {took:.1f} s")


def _counts_text() -> str:
    """``; tenant-audit 340/1,200 done``: the most recent open counter (:mod:`ragaudit.counters`), if any."""
    from ragaudit.counters import active_counts

    counts = active_counts()
    if counts is None:
        return ""
    desc, done, total = counts
    return f"; {desc + ' ' if desc else ''}{done:,}/{total:,} done"


class Watcher:
    """Speaks when a command has been silent too long: see the module docstring.

    :meth:`tick` decides from the time it is given (the thread passes the monotonic clock; tests pass
    their own), so what is said and when is testable without waiting.
    """

    def __init__(
        self,
        command: str,
        *,
        terminal: bool,
        clock: Callable[[], float] = time.monotonic,
        stream: Callable[[], TextIO] = lambda: sys.stderr,
        bar_active: Callable[[], bool] | None = None,
    ) -> None:
        self.command = command
        self.terminal = terminal
        self.clock = clock
        self.stream = stream
        self.bar_active = bar_active or _tqdm_bar_active
        self.started = self.last = clock()
        self.said = False
        self.steps: list[tuple[str, float]] = []
        self.status_shown = False
        self._lock = threading.Lock()

    def spoke(self) -> None:
        """Something was said (a note, a step): the silence starts again."""
        with self._lock:
            self._clear_status()
            self.said, self.last = True, self.clock()

    def enter(self, what: str) -> None:
        with self._lock:
            self.steps.append((what, self.clock()))

    def leave(self, what: str) -> None:
        with self._lock:
            self._clear_status()
            for i in range(len(self.steps) - 1, -1, -1):
                if self.steps[i][0] == what:
                    del self.steps[i]
                    break

    def tick(self, now: float) -> str | None:
        """Speak if the command has been silent too long at ``now``; return what was said."""
        with self._lock:
            limit = EVERY_S if self.said else FIRST_S
            if now - self.last < limit or (self.terminal and self.bar_active()):
                return None
            what, since = self.steps[-1] if self.steps else (self.command, self.started)
            line = f"{what}: still running, {now - since:.0f} s{_counts_text()}"
            if not self.said and not self.steps:
                line = f"{self.command}: working ..."
            out = self.stream()
            if self.terminal and self.steps:  # in place; outside a step the command's own prints follow
                out.write(f"\r{line}\x1b[K")
                self.status_shown = True
            else:
                out.write(line + "\n")
            out.flush()
            self.said, self.last = True, now
            return line

    def _clear_status(self) -> None:
        if self.status_shown:
            out = self.stream()
            out.write("\r\x1b[K")
            out.flush()
            self.status_shown = False

    def finish(self) -> None:
        with self._lock:
            self._clear_status()


def _tqdm_bar_active() -> bool:
    """Whether a tqdm bar (the runner's per-case bar, the embedding bar) is on the terminal now."""
    tqdm_module = sys.modules.get("tqdm")
    instances = getattr(getattr(tqdm_module, "tqdm", None), "_instances", ())
    return bool(len(instances))


_watch: dict[str, Watcher] = {}


@contextlib.contextmanager
def watching(command: str, *, progress: bool | None = None) -> Iterator[Watcher | None]:
    """Watch a whole command (see the module docstring). ``progress`` False (``--no-progress``)
    speaks in lines on a terminal too; nothing is said with ``--quiet``."""
    if _state["quiet"]:
        yield None
        return
    terminal = sys.stderr.isatty() and progress is not False
    watcher = Watcher(command, terminal=terminal)
    _watch["current"] = watcher
    stop = threading.Event()

    def loop() -> None:
        while not stop.wait(TICK_S):
            try:
                watcher.tick(watcher.clock())
            except (OSError, ValueError):  # stderr closed under us: stop speaking
                return

    thread = threading.Thread(target=loop, name="ragaudit-watcher", daemon=True)
    thread.start()
    try:
        yield watcher
    finally:
        stop.set()
        thread.join(timeout=1.0)
        watcher.finish()
        _watch.pop("current", None)


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
