"""Reading a report into typed views: a required field that is missing fails loudly, an optional one is None.

:class:`Fields` wraps one JSON object of a report; ``need`` raises :class:`ReportFieldError` naming the
kind and the full field path (``pipelines[1].name``), ``opt`` returns None for a missing field. The
views every kind shares (a paired comparison, a latency summary) are here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragaudit.errors import ReportFieldError


def missing_field(kind: str, source: str, path: str, what: str) -> ReportFieldError:
    """The error for a required field at ``path`` of a ``kind`` report that ``what`` (``is missing``)."""
    return ReportFieldError(
        source,
        None,
        f"{kind} report: required field '{path}' {what}",
        "restore the field, or re-run the command that wrote the report with this ragaudit version",
    )


@dataclass(frozen=True)
class Fields:
    """One JSON object of a ``kind`` report read from ``source``, at ``path`` inside the report."""

    data: Mapping[str, Any]
    kind: str
    source: str = "report"
    path: str = ""

    def _at(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def need(self, key: str) -> Any:
        """The value of a required field."""
        if key not in self.data:
            raise missing_field(self.kind, self.source, self._at(key), "is missing")
        return self.data[key]

    def opt(self, key: str) -> Any:
        """The value of an optional field (None when it is missing)."""
        return self.data.get(key)

    def obj(self, key: str, *, required: bool = True) -> Fields:
        """The object at ``key`` (an optional missing or null one reads as an empty object)."""
        value = self.need(key) if required else self.opt(key)
        if value is None and not required:
            value = {}
        if not isinstance(value, Mapping):
            raise missing_field(self.kind, self.source, self._at(key), "is not an object")
        return Fields(value, self.kind, self.source, self._at(key))

    def each(self, key: str, *, required: bool = True) -> list[Fields]:
        """The objects of the list at ``key`` (an optional missing one reads as an empty list)."""
        value = self.need(key) if required else (self.opt(key) or [])
        if not isinstance(value, list):
            raise missing_field(self.kind, self.source, self._at(key), "is not a list")
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, Mapping):
                raise missing_field(self.kind, self.source, f"{self._at(key)}[{i}]", "is not an object")
            out.append(Fields(item, self.kind, self.source, f"{self._at(key)}[{i}]"))
        return out

    def texts(self, key: str) -> list[str]:
        """The optional list of text at ``key`` (empty when missing)."""
        value = self.opt(key)
        return [str(v) for v in value] if isinstance(value, list) else []

    def numbers(self, key: str) -> dict[str, Any]:
        """The optional ``{name: number}`` object at ``key`` (empty when missing)."""
        return dict(self.obj(key, required=False).data)


def number(value: Any) -> float | None:
    """A JSON number as a float (None for null, NaN, text, a bool: a missing value, shown as –)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        return None
    return float(value)


def count(value: Any) -> int | None:
    """A JSON integer (None for null, a float, text, a bool: a missing count)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def interval(value: Any) -> tuple[float, float] | None:
    """A ``[low, high]`` pair of numbers (None when either end is missing: null or NaN, as a comparison
    over 0 paired cases writes it)."""
    if not isinstance(value, (list, tuple)) or len(value) != 2:
        return None
    low, high = number(value[0]), number(value[1])
    return None if low is None or high is None else (low, high)


@dataclass(frozen=True)
class Latency:
    """A latency summary in milliseconds (``p50``, ``p95``, ``p99``, ``mean``; None where absent)."""

    p50: float | None
    p95: float | None
    p99: float | None
    mean: float | None

    @classmethod
    def read(cls, value: Any) -> Latency | None:
        """The summary at a report's ``latency_ms`` (None when the report has none or an empty one)."""
        if not isinstance(value, Mapping) or not value:
            return None
        return cls(*(number(value[k]) if k in value else None for k in ("p50", "p95", "p99", "mean")))


@dataclass(frozen=True)
class Paired:
    """One paired comparison (:func:`ragaudit.evaluation.compare.compare_reports` rows): ``metric`` (and
    ``system`` where the rows compare several) are required; the figures read as None where a report
    leaves them out."""

    metric: str
    system: str
    baseline_mean: float | None
    system_mean: float | None
    delta: float | None
    ci: tuple[float, float] | None
    p_value_corrected: float | None
    significant: bool
    wins: int | None
    ties: int | None
    losses: int | None
    n: int | None
    most_improved: list[Mapping[str, Any]]
    most_regressed: list[Mapping[str, Any]]
    data: Mapping[str, Any]
    """The row as written (for the sections that show what this view leaves out)."""

    @classmethod
    def read(cls, row: Fields, system: str | None = None) -> Paired:
        """The comparison in ``row``; ``system`` given: rows of one system that do not name it."""
        ci = row.opt("ci")
        wins, ties, losses, n = (
            c if isinstance(c := row.opt(k), int) else None for k in ("wins", "ties", "losses", "n")
        )
        return cls(
            str(row.need("metric")),
            str(row.need("system")) if system is None else system,
            number(row.opt("baseline_mean")),
            number(row.opt("system_mean")),
            number(row.opt("delta")),
            interval(ci),
            number(row.opt("p_value_corrected")),
            row.opt("significant") is True,
            wins,
            ties,
            losses,
            n,
            [m.data for m in row.each("most_improved", required=False)],
            [m.data for m in row.each("most_regressed", required=False)],
            row.data,
        )

    @classmethod
    def rows(
        cls, comparison: Mapping[str, Any], kind: str = "eval", source: str = "comparison"
    ) -> list[Paired]:
        """The rows of a ``compare_reports`` result (``comparisons``), typed."""
        return [cls.read(r) for r in Fields(comparison, kind, source).each("comparisons", required=False)]


@dataclass(frozen=True)
class MetricSummary:
    """One metric of an eval report as its page shows it: the mean, a bootstrap CI of the mean over the
    per-case values, n, and the paired comparison with the baseline if any (computed by
    :func:`ragaudit.report.view.build_view`)."""

    name: str
    value: float | None
    ci: tuple[float, float] | None
    n: int
    comparison: Paired | None = None


def significance_of(report: Fields) -> tuple[Any, str]:
    """``(alpha, correction)`` of an experiment report's paired tests (top level, else ``significance``)."""
    settings = {**report.obj("significance", required=False).data}
    settings.update({k: report.data[k] for k in ("alpha", "correction") if k in report.data})
    return settings.get("alpha", 0.05), str(settings.get("correction", "holm-bonferroni"))


@dataclass(frozen=True)
class Leak:
    """One cross-tenant chunk an eval returned (``security.records``)."""

    case_id: str
    chunk_id: str
    rank: Any
    claimed_tenant: str | None
    """The tenant the chunk was labelled with (None: unlabelled)."""
    caller_tenant: str

    @classmethod
    def read(cls, leak: Fields) -> Leak:
        claimed, rank = leak.opt("claimed_tenant"), leak.opt("rank")
        return cls(
            str(leak.opt("case_id") or ""),
            str(leak.opt("chunk_id") or ""),
            "" if rank is None else rank,
            None if claimed is None else str(claimed),
            str(leak.opt("caller_tenant") or ""),
        )

    @classmethod
    def all_in(cls, report: Fields) -> list[Leak]:
        """The leak records of a report's ``security`` section (none without one)."""
        security = report.opt("security")
        if not isinstance(security, Mapping):
            return []
        section = Fields(security, report.kind, report.source, "security")
        return [cls.read(r) for r in section.each("records", required=False)]


@dataclass(frozen=True)
class Problems:
    """What a report says went wrong: missing case ids, errors ``(id, message)`` and notes."""

    missing: list[str]
    errors: list[tuple[str, str]]
    notes: list[str]

    @classmethod
    def read(cls, report: Fields) -> Problems:
        errors = report.opt("errors")  # a list of cases in an eval report; other kinds count errors
        listed = errors if isinstance(errors, list) else []
        return cls(
            report.texts("missing"),
            [(str(e.get("id", "")), str(e.get("error") or "")) for e in listed if isinstance(e, Mapping)],
            report.texts("notes"),
        )


@dataclass(frozen=True)
class Counts:
    """A report's case counts (``counts``: eval and reranker-eval reports); None where absent."""

    cases: int
    answerable: int | None
    unanswerable: int | None
    missing: int | None
    errors: int | None
    """Answerable cases that failed (scored 0)."""
    unanswerable_errors: int = 0
    """Unanswerable cases that failed (not scored)."""

    @classmethod
    def read(cls, report: Fields) -> Counts | None:
        """The counts, or None when the report has no ``counts`` with an integer ``cases``."""
        counts = report.opt("counts")
        cases = counts.get("cases") if isinstance(counts, Mapping) else None
        if not isinstance(counts, Mapping) or not isinstance(cases, int) or isinstance(cases, bool):
            return None
        answerable, unanswerable, missing, errors = (
            count(counts.get(k)) for k in ("answerable", "unanswerable", "missing", "errors")
        )
        return cls(
            cases, answerable, unanswerable, missing, errors, count(counts.get("unanswerable_errors")) or 0
        )


@dataclass(frozen=True)
class Holes:
    """One system's judged share of the top k (``holes``: :class:`ragaudit.evaluation.holes.HoleSummary`)."""

    system: str
    k: int | None
    min_judged: float | None
    judged: float | None
    cases: int | None
    below: int | None
    worst: list[tuple[str, float | None]]
    status: str
    warning: str | None

    @classmethod
    def read(cls, value: Any, system: str | None = None) -> Holes | None:
        """The summary at a report's ``holes`` (None when the report has none: written before it existed)."""
        if not isinstance(value, Mapping) or "status" not in value:
            return None
        k, cases, below, warning = (value.get(key) for key in ("k", "cases", "below", "warning"))
        worst = value.get("worst")
        return cls(
            str(value.get("system") or system or ""),
            count(k),
            number(value.get("min_judged")),
            number(value.get("judged")),
            count(cases),
            count(below),
            [
                (str(w.get("id", "")), number(w.get("judged")))
                for w in (worst if isinstance(worst, list) else [])
                if isinstance(w, Mapping)
            ],
            str(value["status"]),
            None if warning is None else str(warning),
        )

    @classmethod
    def all_in(cls, report: Fields) -> list[Holes]:
        """The summaries of a report's ``holes`` list (compare), or of each pipeline (benchmark)."""
        listed = report.opt("holes")
        if isinstance(listed, list):
            return [h for h in (cls.read(v) for v in listed) if h is not None]
        found = [
            cls.read(p.opt("holes"), str(p.opt("name") or ""))
            for p in report.each("pipelines", required=False)
        ]
        return [h for h in found if h is not None]


@dataclass(frozen=True)
class Power:
    """A comparison's power figures (``power`` of a comparison row: :func:`ragaudit.stats.power.estimate_power`)."""

    cases: int | None
    sd: float | None
    alpha: float | None
    power: float | None
    delta: float | None
    cases_needed: int | None
    detectable: float | None

    @classmethod
    def read(cls, row: Mapping[str, Any]) -> Power | None:
        value = row.get("power")
        if not isinstance(value, Mapping) or not value:
            return None
        cases, needed = value.get("cases"), value.get("cases_needed")
        return cls(
            count(cases),
            number(value.get("sd_of_differences")),
            number(value.get("alpha")),
            number(value.get("power")),
            number(value.get("delta")),
            count(needed),
            number(value.get("smallest_detectable_delta")),
        )
