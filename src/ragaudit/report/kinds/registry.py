"""The registry of report kinds: built-ins and third-party kinds register through one function.

Built-ins are listed here as ``module:attribute`` targets and loaded by :func:`load_kind`, the same
function that loads each entry point of the group ``ragaudit.report_kinds``; a package adds a kind
with ``[project.entry-points."ragaudit.report_kinds"] my-kind = "my_pkg.kinds:KIND"``.

A third-party kind is isolated: an entry point that fails to load is reported once, by name (a
``RuntimeWarning``, and :func:`broken_kinds` for the error a report of that kind gets), and never keeps
the built-in kinds from loading; its older ``markdown`` / ``html`` hooks are not trusted (the pages
show their output as text), so it draws through a document, as every built-in kind does.
"""

from __future__ import annotations

import importlib
import warnings
from importlib.metadata import entry_points

from ragaudit.artifacts.envelope import REPORT_KINDS
from ragaudit.report.kinds.base import ReportKind

GROUP = "ragaudit.report_kinds"
BUILTIN_KINDS = tuple(f"ragaudit.report.kinds.{name.replace('-', '_')}:KIND" for name in REPORT_KINDS)
"""Each kind the envelope knows (:data:`ragaudit.artifacts.envelope.REPORT_KINDS`) is the ``KIND`` of the
module of its name here (``reranker-eval``: ``report/kinds/reranker_eval.py``)."""
_KINDS: dict[str, ReportKind] = {}
_BROKEN: dict[str, str] = {}
_loaded = False


def register_kind(kind: ReportKind) -> ReportKind:
    """Register ``kind`` under its name (a later registration of the same name replaces it)."""
    if not kind.name:
        raise ValueError(f"report kind {type(kind).__name__} has no name")
    _KINDS[kind.name] = kind
    return kind


def load_kind(target: str) -> ReportKind:
    """Import ``module:attribute`` (a :class:`ReportKind` instance) and register it."""
    module, _, attribute = target.partition(":")
    kind = getattr(importlib.import_module(module), attribute)
    if not isinstance(kind, ReportKind):
        raise TypeError(f"{target} is not a ReportKind")
    return register_kind(kind)


def _ensure_loaded() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for target in BUILTIN_KINDS:
        load_kind(target)
    for point in entry_points(group=GROUP):
        try:
            load_kind(point.value)
        except Exception as exc:  # a third party's bug must not break the built-in kinds
            _BROKEN[point.name] = f"{point.value}: {type(exc).__name__}: {exc}"
            warnings.warn(
                f"report kind {point.name!r} (entry point {point.value} of {GROUP}) could not be loaded "
                f"and is skipped: {type(exc).__name__}: {exc}",
                RuntimeWarning,
                stacklevel=2,
            )


def registered_kinds() -> dict[str, ReportKind]:
    """Every registered kind by name, built-ins first."""
    _ensure_loaded()
    return dict(_KINDS)


def report_kind(name: str) -> ReportKind | None:
    """The kind registered as ``name``, or None."""
    _ensure_loaded()
    return _KINDS.get(name)


def broken_kinds() -> dict[str, str]:
    """``{entry-point name: why it failed to load}`` of the third-party kinds that were skipped."""
    _ensure_loaded()
    return dict(_BROKEN)
