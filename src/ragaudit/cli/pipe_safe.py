"""Standard output that survives a reader that went away (``ragaudit eval ... | head``).

When the reader of a pipe closes it, the next write raises ``BrokenPipeError``. Left alone, that error
ends the command half-way: the report of ``--out`` and the run history are never written, and the
message blamed a path ("check the path and its permissions", exit 2). Through :class:`PipeSafeStdout`
the command runs to its end and exits with its own code; what it still prints goes to the null device
(file descriptor 1 is pointed there, so the interpreter's last flush cannot fail either).
"""

from __future__ import annotations

import os
from typing import Any, TextIO


class PipeSafeStdout:
    """Wraps a text stream: ``write`` and ``flush`` swallow ``BrokenPipeError`` (once it happened, every
    later write is dropped); everything else (``isatty``, ``fileno``, ``encoding``, ...) is the stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream
        self.broken = False

    def write(self, text: str) -> int:
        if not self.broken:
            try:
                return self._stream.write(text)
            except BrokenPipeError:
                self._silence()
        return len(text)

    def flush(self) -> None:
        if not self.broken:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._silence()

    def _silence(self) -> None:
        self.broken = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            try:
                os.dup2(devnull, self._stream.fileno())
            finally:
                os.close(devnull)
        except (OSError, ValueError):  # no file descriptor (a StringIO in tests): dropping is enough
            pass

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
