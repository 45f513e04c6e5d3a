"""A progress bar on stderr (tqdm) that stays out of the way when nobody is watching."""

from __future__ import annotations

import sys
from typing import Protocol


class Progress(Protocol):
    def update(self, n: int = 1) -> object: ...

    def close(self) -> None: ...


class _Silent:
    """The bar when it is off: does nothing."""

    def update(self, n: int = 1) -> None:
        return None

    def close(self) -> None:
        return None


def progress_bar(total: int, *, initial: int = 0, enabled: bool | None = None, desc: str = "") -> Progress:
    """A bar counting finished cases. ``enabled=None`` shows it only when stderr is a terminal."""
    if enabled is None:
        enabled = sys.stderr.isatty()
    if not enabled or total <= 0:
        return _Silent()
    from tqdm import tqdm

    bar: Progress = tqdm(
        total=total, initial=initial, desc=desc or None, unit="q", file=sys.stderr, leave=False
    )
    return bar
