"""The terminal report: what a command prints, for any report kind, from the kind's typed view.

:func:`render_terminal` reads a report through its registered :class:`ragaudit.report.kinds.ReportKind`
(``from_json`` fails loudly on a missing field) and prints the kind's terminal section; the commands
print through it, so the terminal, Markdown and HTML renderers all loop over one registry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragaudit.errors import InputError
from ragaudit.report.kinds import report_kind


def render_terminal(report: Mapping[str, Any], source: str = "report", limit: int = 10) -> str:
    """The terminal text of ``report`` (a ``to_dict()`` or a parsed JSON report); lists show at most
    ``limit`` items."""
    name = str(report.get("kind", ""))
    kind = report_kind(name)
    if kind is None:
        raise InputError(
            source, None, f"no report kind {name!r} is registered", "install the package that adds it"
        )
    from ragaudit.artifacts.in_sample import in_sample_line

    lines = kind.terminal(kind.from_json(report, source), limit)
    flag = in_sample_line(report)  # a fitted stage scored on its own training cases: said first
    return "\n".join([flag, *lines] if flag else lines)
