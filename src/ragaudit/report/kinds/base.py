"""What a report kind is: its name, schema fragment, required fields, typed view and its sections.

A :class:`ReportKind` owns one ``kind`` of report: ``from_json`` checks the fields its sections
cannot do without and fails loudly (:class:`ReportFieldError`, naming the kind and the field path)
instead of rendering ``–``, and returns the kind's typed view (a dataclass; :class:`KindReport` for a
kind without one); ``document`` builds its content once from that view, as a format-free
:class:`ragaudit.report.document.Document` that the terminal, Markdown and HTML back-ends draw.
``terminal``, ``markdown`` and ``html`` are the older hooks: every built-in kind builds a document,
and a third-party kind that still uses them has their output shown as text (never as Markdown or HTML).
Optional fields stay optional: the typed views hold None. ``read`` may add what a page computes to the
typed view (the eval kind: bootstrap CIs and the comparison with a baseline).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from ragaudit.errors import ReportFieldError
from ragaudit.report.document import Document
from ragaudit.report.kinds.fields import Fields, missing_field


@dataclass(frozen=True)
class KindReport:
    """A report read by its kind: the kind's name and the checked mapping."""

    kind: str
    data: Mapping[str, Any]


def require(data: Mapping[str, Any], path: str, kind: str, source: str) -> None:
    """Check the required field at ``path`` (``a.b`` nests; ``a[].b`` checks ``b`` in every item of
    the list ``a``), raising :class:`ReportFieldError` naming the kind and the path."""
    head, _, rest = path.partition(".")
    each = head.endswith("[]")
    key = head.removesuffix("[]")
    if key not in data:
        raise missing_field(kind, source, path, "is missing")
    value = data[key]
    if each:
        if not isinstance(value, list):
            raise missing_field(kind, source, key, "is not a list")
        for i, item in enumerate(value):
            if not isinstance(item, Mapping):
                raise missing_field(kind, source, f"{key}[{i}]", "is not an object")
            if rest:
                _nested(item, rest, kind, source, f"{key}[{i}]")
    elif rest:
        if not isinstance(value, Mapping):
            raise missing_field(kind, source, key, "is not an object")
        _nested(value, rest, kind, source, key)


def _nested(data: Mapping[str, Any], rest: str, kind: str, source: str, prefix: str) -> None:
    try:
        require(data, rest, kind, source)
    except ReportFieldError as exc:
        inner = exc.problem.message.split("'", 2)
        raise missing_field(kind, source, f"{prefix}.{inner[1]}", inner[2].strip()) from None


class ReportKind:
    """One report kind. Subclasses set ``name`` and ``required`` and override the sections they have."""

    name: ClassVar[str] = ""
    required: ClassVar[tuple[str, ...]] = ()
    """Field paths every report of this kind carries (see :func:`require`)."""
    schema: ClassVar[Mapping[str, Any]] = {"type": "object"}
    """The JSON Schema fragment of this kind's own keys (open kinds: any object)."""

    def from_json(self, data: Mapping[str, Any], source: str = "report") -> Any:
        """The report, checked (every ``required`` field present, else a loud :class:`ReportFieldError`)
        and read into this kind's typed view (:meth:`typed`)."""
        for path in self.required:
            require(data, path, self.name, source)
        return self.typed(Fields(data, self.name, source))

    def typed(self, report: Fields) -> Any:
        """This kind's typed view of a report (a kind with one overrides this; ``report.need`` fails loudly)."""
        return KindReport(self.name, report.data)

    def document(self, report: Any) -> Document | None:
        """This kind's content, built once from its typed view: findings first, then the figures behind
        them (None: a third-party kind that draws through the older hooks, shown as text)."""
        return None

    def read(self, view: Any) -> Any:
        """The typed view of the report ``view`` renders (read once by ``build_view``)."""
        return view.typed if view.typed is not None else self.from_json(view.report)

    def gate(self, report: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The gate verdict shown in the report's header: its ``gate`` section (None without one)."""
        gate = report.get("gate")
        return gate if isinstance(gate, Mapping) else None

    def pipeline(self, report: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The pipeline the provenance names when the report has no ``pipeline`` section."""
        return None

    def chunking_text(self, report: Any) -> str | None:
        """What the provenance says about chunking for this kind (None: the pipeline's strategy)."""
        return None

    def terminal(self, report: Any, limit: int = 10) -> list[str]:
        """Older hook (a kind with a ``document`` needs none): what the command that wrote a report of
        this kind prints, from its typed view; lists show at most ``limit`` items."""
        return []

    def title(self, report: Mapping[str, Any]) -> str | None:
        """What the report is about (None: the system label)."""
        return None

    def markdown(self, view: Any) -> list[str]:
        """Older hook (a kind with a ``document`` needs none): its own Markdown lines of a
        :class:`ragaudit.report.view.ReportView` (after the gate, before the sweeps)."""
        return []

    def html(self, view: Any) -> list[tuple[str, str, str]]:
        """Older hook: its own sections ``(anchor, title, text)``, shown as text on the page."""
        return []

    shows_notes: ClassVar[bool] = False
    """True when the kind's document shows the report's ``notes`` (the page does not list them again)."""
