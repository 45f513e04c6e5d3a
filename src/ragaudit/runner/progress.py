"""Progress of the cases a run works through: a bar on stderr (tqdm) when someone is watching, and a
count the command line can quote either way.

:func:`progress_bar` always counts (``active_counts`` gives the latest open counter's description,
cases done and total), and draws a bar only when enabled (by default when stderr is a terminal). The
command line's watcher (``ragaudit.cli.console.watching``) quotes the count in the lines it prints when
no bar is drawn (``--no-progress``, stderr not a terminal), so a long run says how far it is.
"""

from __future__ import annotations

import sys
import threading
from typing import Any, Protocol


class Progress(Protocol):
    def update(self, n: int = 1) -> object: ...

    def close(self) -> None: ...


class _Counter:
    """Counts finished cases; forwards to a tqdm bar when one is drawn."""

    def __init__(self, total: int, initial: int, desc: str, bar: Any) -> None:
        self.total, self.done, self.desc, self.bar = total, initial, desc, bar
        with _lock:
            _open.append(self)

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        with _lock:
            if self in _open:
                _open.remove(self)
        if self.bar is not None:
            self.bar.close()


_lock = threading.Lock()
_open: list[_Counter] = []


def active_counts() -> tuple[str, int, int] | None:
    """``(description, done, total)`` of the most recently opened counter still open, else None."""
    with _lock:
        if not _open:
            return None
        last = _open[-1]
        return last.desc, last.done, last.total


def progress_bar(total: int, *, initial: int = 0, enabled: bool | None = None, desc: str = "") -> Progress:
    """A counter of finished cases, drawn as a bar when ``enabled`` (``None``: only when stderr is a
    terminal)."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    bar = None
    if enabled and total > 0:
        from tqdm import tqdm

        bar = tqdm(total=total, initial=initial, desc=desc or None, unit="q", file=sys.stderr, leave=False)
    return _Counter(total, initial, desc, bar)
