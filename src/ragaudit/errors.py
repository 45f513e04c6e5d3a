"""Exceptions raised by ragaudit.

Hierarchy::

    RagauditError                 base of everything ragaudit raises on purpose
    ├── InputError                a user file or argument is wrong; carries file:line and the fix
    │   └── ValidationError       several problems found at once (``ragaudit validate``)
    ├── MetricNameError           an unknown metric name; lists valid names, suggests the closest
    ├── TenantError               a retrieval request without a usable tenant (refused, never served)
    └── MissingDependencyError    an optional extra is not installed; names the pip command

``MetricNameError`` is also a ``ValueError`` so callers that only know the builtin keep working.
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


class TenantError(RagauditError, ValueError):
    """A retrieval request without a tenant (or an empty one): refused, never served from any tenant's data."""


class MissingDependencyError(RagauditError, ImportError):
    """An optional dependency is missing; the message names the pip command that installs it."""

    def __init__(self, package: str, extra: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{package} is not installed; it is needed here. Install it with: pip install 'ragaudit[{extra}]'"
        )
