"""Opening the SQLite files ragaudit keeps (embedding cache, LLM answer cache) safely across processes.

Several processes may open the same file at once (parallel test workers, a sweep and an eval). SQLite
honours the busy timeout for ordinary reads and writes, but switching a fresh file to WAL mode or
creating its tables can still fail at once with "database is locked"; those steps are retried with
a short backoff until ``timeout_s`` has passed.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from pathlib import Path


def connect_shared(
    path: Path, initialise: Callable[[sqlite3.Connection], None], timeout_s: float = 60.0
) -> sqlite3.Connection:
    """A WAL-mode connection to ``path`` (created with its parents), after ``initialise(conn)`` ran.

    Raises ``OSError`` or ``sqlite3.Error`` when the file cannot be opened within ``timeout_s``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout_s
    delay = 0.01
    while True:
        conn = sqlite3.connect(path, timeout=timeout_s, check_same_thread=False)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            initialise(conn)
            return conn
        except sqlite3.OperationalError as exc:
            conn.close()
            busy = "locked" in str(exc) or "busy" in str(exc)
            if not busy or time.monotonic() + delay > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
        except BaseException:
            conn.close()
            raise
