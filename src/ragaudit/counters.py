"""How far the long loops are: open counters any floor can keep, which the command line quotes.

A loop over many items (the runner's cases, an audit's requests, texts to embed) opens a counter,
updates it and closes it. Nothing is printed here: the command line's watcher
(``ragaudit.cli.console.watching``) quotes the most recently opened counter when it says a step is
still running (``...: still running, 10 s; embedding 1,200/5,000 done``).
"""

from __future__ import annotations

import threading


class Counter:
    """Items done out of a total; :meth:`close` when the loop ends (also as a context manager)."""

    def __init__(self, total: int, desc: str = "", initial: int = 0) -> None:
        self.total, self.done, self.desc = total, initial, desc
        with _lock:
            _open.append(self)

    def update(self, n: int = 1) -> None:
        self.done += n

    def close(self) -> None:
        with _lock:
            if self in _open:
                _open.remove(self)

    def __enter__(self) -> Counter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_lock = threading.Lock()
_open: list[Counter] = []


def active_counts() -> tuple[str, int, int] | None:
    """``(description, done, total)`` of the most recently opened counter still open, else None."""
    with _lock:
        if not _open:
            return None
        last = _open[-1]
        return last.desc, last.done, last.total
