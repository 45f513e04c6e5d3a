"""Retrieval failures, split by whether trying again can help.

Hierarchy::

    RagauditError
    └── RetrievalError                 a retriever could not answer one query
        ├── TransientRetrievalError    may succeed if retried: timeout, connection error, HTTP 408/429/5xx
        └── PermanentRetrievalError    retrying cannot help: HTTP 4xx, malformed or mistyped response

Adapters (HTTP, plugins, replay) raise these; the runner retries only what :func:`is_transient`
accepts and records everything else as the case's error at once. The message of a
``RetrievalError`` is written for the report as is (the runner does not prefix a type name).
"""

from __future__ import annotations

import asyncio

from ragaudit.errors import RagauditError


class RetrievalError(RagauditError):
    """A retriever failed to answer one query."""


class TransientRetrievalError(RetrievalError):
    """A failure that may go away on retry. ``retry_after_s`` is the server's hint (``Retry-After``)."""

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class PermanentRetrievalError(RetrievalError):
    """A failure that retrying cannot fix (a rejected request, a response of the wrong shape)."""


def is_transient(exc: BaseException) -> bool:
    """True for failures worth retrying: typed transient errors, timeouts and connection errors.

    Anything else (typed permanent errors, ``TypeError`` from a malformed result, a plugin's own
    ``ValueError``, ...) fails the case at the first attempt.
    """
    if isinstance(exc, TransientRetrievalError):
        return True
    if isinstance(exc, RetrievalError):
        return False
    return isinstance(exc, (asyncio.TimeoutError, TimeoutError, ConnectionError))


def retry_after_hint(exc: BaseException) -> float | None:
    """The server's requested wait before the next attempt, when the failure carried one."""
    return exc.retry_after_s if isinstance(exc, TransientRetrievalError) else None
