"""Progress of the cases a run works through: a bar on stderr (tqdm) when someone is watching, and a
count the command line can quote either way.

:func:`progress_bar` always counts (a :class:`ragaudit.counters.Counter`, which the command line's
watcher quotes when it says a step is still running: ``--no-progress``, stderr not a terminal), and
draws a bar only when enabled (by default when stderr is a terminal).
"""

from __future__ import annotations

import sys
from typing import Any, Protocol

from ragaudit.counters import Counter, active_counts

__all__ = ["Progress", "active_counts", "progress_bar"]


class Progress(Protocol):
    def update(self, n: int = 1) -> object: ...

    def close(self) -> None: ...


class _Counted(Counter):
    """A counter that also moves a tqdm bar when one is drawn."""

    def __init__(self, total: int, initial: int, desc: str, bar: Any) -> None:
        super().__init__(total, desc, initial)
        self.bar = bar

    def update(self, n: int = 1) -> None:
        super().update(n)
        if self.bar is not None:
            self.bar.update(n)

    def close(self) -> None:
        super().close()
        if self.bar is not None:
            self.bar.close()


def progress_bar(total: int, *, initial: int = 0, enabled: bool | None = None, desc: str = "") -> Progress:
    """A counter of finished cases, drawn as a bar when ``enabled`` (``None``: only when stderr is a
    terminal)."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    bar = None
    if enabled and total > 0:
        from tqdm import tqdm

        bar = tqdm(total=total, initial=initial, desc=desc or None, unit="q", file=sys.stderr, leave=False)
    return _Counted(total, initial, desc, bar)
