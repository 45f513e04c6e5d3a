"""The terminal report: what a command prints, for any report kind, from the kind's typed view.

:func:`render_terminal` reads a report through its registered :class:`ragaudit.report.kinds.ReportKind`
(``from_json`` fails loudly on a missing field) and draws the kind's document with the terminal
back-end (:func:`ragaudit.report.draw.terminal.draw_terminal`; every built-in kind builds a document,
a third party's kind without one prints its older ``terminal`` lines); the commands print through it, so every format loops over one registry.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragaudit.errors import InputError
from ragaudit.report.draw.terminal import draw_terminal
from ragaudit.report.kinds import ReportKind, broken_kinds, report_kind


def kind_of(report: Mapping[str, Any], source: str = "report") -> ReportKind:
    """The registered kind of ``report``, or an :class:`InputError` saying why there is none (not
    installed, or its package's entry point failed to load)."""
    name = str(report.get("kind", ""))
    kind = report_kind(name)
    if kind is not None:
        return kind
    broken = broken_kinds().get(name)
    if broken is not None:
        raise InputError(
            source,
            None,
            f"report kind {name!r} failed to load ({broken})",
            "fix or reinstall the package that adds it",
        )
    raise InputError(
        source, None, f"no report kind {name!r} is registered", "install the package that adds it"
    )


def render_terminal(report: Mapping[str, Any], source: str = "report", limit: int = 10) -> str:
    """The terminal text of ``report`` (a ``to_dict()`` or a parsed JSON report); lists show at most
    ``limit`` items."""
    from ragaudit.evaluation.bench_in_sample import with_own_bench_in_sample

    report = with_own_bench_in_sample(report)  # a benchmark's deleted or edited in-sample marks: recomputed
    kind = kind_of(report, source)
    typed = kind.from_json(report, source)
    document = kind.document(typed)
    lines = draw_terminal(document, limit) if document is not None else kind.terminal(typed, limit)
    from ragaudit.artifacts.in_sample import in_sample_line
    from ragaudit.evaluation.in_sample_integrity import with_own_in_sample

    flag = in_sample_line(with_own_in_sample(report))  # a fitted stage scored on its own cases: said first
    return "\n".join([flag, *lines] if flag else lines)
