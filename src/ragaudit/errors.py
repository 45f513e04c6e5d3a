"""Exceptions raised by ragaudit.

Hierarchy::

    RagauditError                 base of everything ragaudit raises on purpose
    ├── InputError                a user file or argument is wrong; carries file:line and the fix
    │   ├── ValidationError       several problems found at once (``ragaudit validate``)
    │   └── ReportFieldError      a report lacks a field its kind requires
    ├── MetricNameError           an unknown metric name; lists valid names, suggests the closest
    ├── ChunkerError              a bad chunker configuration (unknown strategy, size, overlap)
    ├── TenantError               a retrieval request without a usable tenant (refused, never served)
    ├── BadAction                 a labeling-workbench request it refuses (unknown case, bad grade or span)
    ├── MissingDependencyError    an optional extra is not installed; names the pip command
    ├── RunFailedError            a run failed: more cases failed than allowed, or none could be scored
    └── RetrievalError            a retriever (or chat endpoint) could not answer one query
        ├── TransientRetrievalError    may succeed if retried: timeout, connection error, HTTP 408/429/5xx
        │   └── ChatUnavailableError   (also a ChatError) the chat endpoint timed out or was unreachable
        ├── PermanentRetrievalError    retrying cannot help: HTTP 4xx, malformed or mistyped response
        │   └── ChatRequestError       (also a ChatError) the chat request was refused or the reply malformed
        └── ChatError                  the chat endpoint gave no answer

Adapters (HTTP, plugins, replay, the chat client) raise the ``RetrievalError`` family; the runner retries
only what :func:`ragaudit.retry.is_transient` accepts and records everything else as the case's error at
once. The message of a ``RetrievalError`` is written for the report as is.

``MetricNameError`` (like ``ChunkerError``, ``TenantError`` and ``BadAction``) is also a ``ValueError`` so callers that only know the builtin keep working.
The CLI turns any ``RagauditError`` into a one-line message and a non-zero exit, never a traceback.
"""

from __future__ import annotations

from dataclasses import dataclass


class RagauditError(Exception):
    """Base class of every error ragaudit raises on purpose."""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an input: where it is, what is wrong, and how to fix it."""

    path: str
    line: int | None
    message: str
    fix: str = ""
    severity: str = "error"
    """``error`` (the input cannot be used as is) or ``warning`` (used, but probably not what was meant)."""

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line is not None else self.path
        label = "" if self.severity == "error" else f"{self.severity}: "
        return f"{where}: {label}{self.message}" + (f" (fix: {self.fix})" if self.fix else "")


class InputError(RagauditError):
    """A user-supplied file or argument is wrong."""

    def __init__(self, path: str, line: int | None, message: str, fix: str = "") -> None:
        self.problem = Problem(str(path), line, message, fix)
        super().__init__(str(self.problem))


class ValidationError(InputError):
    """Several problems found in one pass; ``problems`` holds every one of them."""

    def __init__(self, problems: list[Problem]) -> None:
        if not problems:
            raise ValueError("ValidationError needs at least one problem")
        self.problems = problems
        first = problems[0]
        super().__init__(first.path, first.line, first.message, first.fix)
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        self.args = (str(first) + more,)


class MetricNameError(RagauditError, ValueError):
    """An unknown or malformed metric name."""


class ReportFieldError(InputError):
    """A report lacks a field its kind requires (renamed, deleted, or written by another version)."""


class ChunkerError(RagauditError, ValueError):
    """A bad chunker configuration (unknown strategy, non-positive size, overlap not below size)."""


class TenantError(RagauditError, ValueError):
    """A retrieval request without a tenant (or an empty one): refused, never served from any tenant's data."""


class BadAction(RagauditError, ValueError):
    """A request the labeling workbench refuses (unknown case or candidate, a grade outside 0-3, a bad span)."""


class MissingDependencyError(RagauditError, ImportError):
    """An optional dependency is missing; the message names the pip command that installs it."""

    def __init__(self, package: str, extra: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{package} is not installed; it is needed here. Install it with: pip install 'ragaudit[{extra}]'"
        )


class RunFailedError(RagauditError):
    """A run failed by the rule of ``ragaudit eval``'s exit code: more failed cases than
    ``max_error_rate`` allows, or no case could be scored (:mod:`ragaudit.evaluation.outcome`).
    ``result`` is the :class:`~ragaudit.evaluation.result.EvalResult` with every case, marked."""

    def __init__(self, message: str, result: object = None) -> None:
        super().__init__(message)
        self.result = result


class RetrievalError(RagauditError):
    """A retriever failed to answer one query. ``response`` is what the service answered with when it
    did answer (an HTTP error's body, parsed JSON or text, and ``headers``): a refusal can still carry
    data, which the tenant audit reads."""

    response: object = None
    headers: object = None


class TransientRetrievalError(RetrievalError):
    """A failure that may go away on retry. ``retry_after_s`` is the server's hint (``Retry-After``)."""

    def __init__(self, message: str, *, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class PermanentRetrievalError(RetrievalError):
    """A failure that retrying cannot fix (a rejected request, a response of the wrong shape)."""


class ChatError(RetrievalError):
    """The chat endpoint did not give an answer."""


class ChatUnavailableError(ChatError, TransientRetrievalError):
    """The endpoint timed out, could not be reached, or answered 408/425/429/5xx (after all retries)."""


class ChatRequestError(ChatError, PermanentRetrievalError):
    """The request was refused (4xx), the reply was not a chat completion, or the API key is not set."""
