"""The ``eval`` report kind (ragaudit eval / ragaudit.evaluate): one system on one dataset.

Its document, in the order the command prints it: how the run went by the exit rule (a failed run
says so first: :mod:`ragaudit.report.kinds.run_outcome`), the metrics (with a bootstrap CI of each mean and,
against a baseline, the paired test, once a page computes them: :class:`Measured`), the changes against
the baseline, the judged share, latency, missing cases and errors, tenant isolation with its leaks, the
notes, and each metric per tenant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from ragaudit.artifacts.tables import delta_ci_label, fmt_p
from ragaudit.report.document import (
    PROBLEMS,
    Block,
    Column,
    Document,
    DotPlot,
    Histogram,
    Items,
    Marked,
    Paragraph,
    Section,
    Span,
    Table,
    Value,
)
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.comparison import delta_columns, delta_values, forest
from ragaudit.report.kinds.fields import Fields, Holes, Latency, Leak, MetricSummary, Paired, number
from ragaudit.report.kinds.isolation import isolation_section
from ragaudit.report.kinds.judged_power import holes_line
from ragaudit.report.kinds.run_outcome import RunOutcome, run_section
from ragaudit.report.kinds.tenants import TenantComparisons, TenantSlices, tenants_section
from ragaudit.verdict import CheckVerdict, isolation_of

UNANSWERABLE = "(unanswerable, not scored) "
"""How an unanswerable case's error starts in the errors list: failed all the same."""


@dataclass(frozen=True)
class EvalCounts:
    cases: int
    answerable: int
    unanswerable: int
    missing: int
    errors: int
    """Answerable cases that failed (scored 0)."""
    unanswerable_errors: int = 0
    """Unanswerable cases that failed (not scored; 0 in a report written before they were counted)."""

    @property
    def failed_answerable(self) -> int:
        """Answerable cases the metrics score 0 because they failed: errors and missing."""
        return self.errors + self.missing


@dataclass(frozen=True)
class Measured:
    """What a page computes from the per-case values (:func:`ragaudit.report.view.build_view`): each
    metric's bootstrap CI and, against a baseline, the paired comparisons; a command's terminal output
    has none of it."""

    metrics: tuple[MetricSummary, ...]
    confidence: float
    baseline: str | None = None
    alpha: float = 0.05
    tenant_tests: TenantComparisons | None = None
    """The paired test per tenant against the baseline (None without one, or with one tenant)."""

    @property
    def comparisons(self) -> list[Paired]:
        return [m.comparison for m in self.metrics if m.comparison is not None]


@dataclass(frozen=True)
class EvalReport:
    """An eval report, typed: ``metrics``, ``counts`` and every case's ``id`` are required."""

    metrics: dict[str, Any]
    """``{metric: mean}`` as written (a float, NaN in memory or None from JSON where undefined)."""
    counts: EvalCounts
    case_ids: list[str]
    latency: Latency | None
    missing: list[str]
    errors: list[tuple[str, str]]
    """``(case id, error)`` of every case whose query failed; an unanswerable one's error starts with
    :data:`UNANSWERABLE`."""
    notes: list[str]
    policy: Mapping[str, Any]
    isolation: CheckVerdict | None
    leaks: list[Leak]
    """The cross-tenant leaks."""
    holes: Holes | None = None
    """The judged share of the top k (None in a report written before it was measured)."""
    latency_basis: str | None = None
    """How ``latency`` was measured (``retrieval.latency``: per query, or a batch's time / its size)."""
    latencies: tuple[float, ...] = ()
    """Each case's latency in ms (the page's histogram)."""
    slices: TenantSlices | None = None
    """Each metric per tenant (None with one tenant, or in a report written before slices)."""
    system: str = ""
    """The run's name (the series on the page's chart)."""
    measured: Measured | None = None
    outcome: RunOutcome | None = None
    """How the run went by the command's exit rule (None: the report has no case records)."""


class EvalKind(ReportKind):
    name = "eval"
    required = ("metrics", "counts", "per_case[].id")
    schema: ClassVar[Mapping[str, Any]] = {"$ref": "#/$defs/eval_report"}
    shows_notes = True

    def typed(self, report: Fields) -> EvalReport:
        counts = report.obj("counts")
        retrieval = report.obj("retrieval", required=False)
        per_case = report.each("per_case")
        run = report.obj("run", required=False)
        cases, answerable, unanswerable, missing, errors = (
            int(counts.need(k)) for k in ("cases", "answerable", "unanswerable", "missing", "errors")
        )
        return EvalReport(
            metrics=dict(report.obj("metrics").data),
            counts=EvalCounts(
                cases, answerable, unanswerable, missing, errors, int(counts.opt("unanswerable_errors") or 0)
            ),
            case_ids=[str(c.need("id")) for c in per_case],
            latency=Latency.read(report.opt("latency_ms")),
            missing=report.texts("missing"),
            errors=[
                (
                    str(e.need("id")),
                    ("" if e.opt("answerable") is not False else UNANSWERABLE)
                    + str(e.opt("error") or "(no message)"),
                )
                for e in report.each("errors", required=False)
            ],
            notes=report.texts("notes"),
            policy=report.obj("policy", required=False).data,
            isolation=isolation_of(report.data),
            leaks=Leak.all_in(report),
            holes=Holes.read(report.opt("holes")),
            latency_basis=basis if isinstance(basis := retrieval.opt("latency"), str) else None,
            latencies=tuple(v for c in per_case if (v := number(c.opt("latency_ms"))) is not None),
            slices=TenantSlices.read(report.opt("tenant_slices")),
            system=str(run.opt("name") or "this run"),
            outcome=RunOutcome.read(report),
        )

    def read(self, view: Any) -> EvalReport:
        """The typed report with what the page computed (``view.metrics``: bootstrap CIs, the
        comparison with the baseline)."""
        report: EvalReport = super().read(view)
        if not view.metrics:
            return report
        tests = view.tenant_comparisons
        measured = Measured(
            tuple(view.metrics),
            view.confidence,
            view.baseline_label,
            view.alpha,
            TenantComparisons.read(Fields({"tenant_comparisons": tests}, self.name)) if tests else None,
        )
        return replace(report, measured=measured)

    def document(self, report: EvalReport) -> Document:
        """The metrics, the changes against a baseline, the judged share, latency, missing cases and
        errors, tenant isolation and its leaks, the notes, each metric per tenant."""
        m = report.measured
        sections = [
            run_section(report.outcome, report.counts.failed_answerable),
            _metrics_section(report),
            _changes_section(m) if m is not None and m.baseline is not None else None,
            Section("holes", "Judged share", (Paragraph(holes_line(report.holes)),))
            if report.holes
            else None,
            _latency_section(report),
            _problems_section(report),
            isolation_section(report.isolation, report.leaks),
            Section("notes", "Notes", tuple(Paragraph(f"note: {n}") for n in report.notes))
            if report.notes
            else None,
            tenants_section(
                [report.slices] if report.slices else [],
                m.tenant_tests if m is not None else None,
                m.comparisons if m is not None else (),
                m.baseline if m is not None else None,
            ),
        ]
        return Document(tuple(s for s in sections if s is not None))


def _metric_table(report: EvalReport) -> Table:
    """``metric, mean`` (as the command prints it); with the page's figures the CI and n, or against a
    baseline its mean, the delta (▲/▼ bold when significant), p and wins/ties/losses."""
    m = report.measured
    if m is None:
        return Table(
            (Column("metric"), Column("mean", "number")),
            tuple((name, value) for name, value in report.metrics.items()),
            cut=False,
            name="metrics",
        )
    ci = Column(f"{m.confidence:.0%} CI", "interval", digits=3)
    if m.baseline is None:
        return Table(
            (Column("metric"), Column("mean", "number"), ci, Column("n", "count")),
            tuple((s.name, s.value, Span(*(s.ci or (None, None))), s.n) for s in m.metrics),
            cut=False,
            name="metrics",
        )
    rows: list[tuple[Value, ...]] = []
    for s in m.metrics:
        c = s.comparison
        delta: Value = c.delta if c is not None else None
        if c is not None and c.significant:
            up = c.delta is not None and c.delta > 0
            delta = Marked(c.delta, " ▲" if up else " ▼", strong=True, tone="up" if up else "down")
        rows.append(
            (
                s.name,
                c.baseline_mean if c else None,
                s.value,
                Span(*(s.ci or (None, None))),
                delta,
                c.p_value_corrected if c else None,
                _wtl(c),
            )
        )
    columns = (
        Column("metric"),
        Column(f"baseline ({m.baseline})", "number"),
        Column("this run", "number"),
        Column(f"{m.confidence:.0%} CI of mean (unadjusted)", "interval", digits=3),
        Column("Δ", "signed"),
        Column("p (Holm)", "p_value"),
        Column("W/T/L"),
    )
    return Table(columns, tuple(rows), cut=False, name="metrics")


def _wtl(c: Paired | None) -> str | None:
    counts = (c.wins, c.ties, c.losses) if c is not None else (None, None, None)
    return None if None in counts else "/".join(map(str, counts))


def _metrics_section(report: EvalReport) -> Section:
    """The metrics table and chart, the case counts and the metric policy."""
    c, policy, m = report.counts, report.policy, report.measured
    blocks: list[Block] = [_metric_table(report)]
    if m is not None:
        names = tuple(s.name for s in m.metrics)
        series = [(report.system, tuple(s.value for s in m.metrics))]
        if m.baseline is not None:
            series.append(
                (m.baseline, tuple(s.comparison.baseline_mean if s.comparison else None for s in m.metrics))
            )
        intervals = ((report.system, tuple(s.ci for s in m.metrics)),)
        caption = (
            f"Point: mean over answerable queries. Whisker: {m.confidence:.0%} percentile-bootstrap CI of "
            "the mean (resampling queries)."
            + (" The second series: the baseline's means." if m.baseline else "")
            + " Each metric has its own axis, scaled to these values."
        )
        blocks.append(
            DotPlot(
                "metric means with confidence intervals",
                names,
                tuple(series),
                report.system,
                intervals,
                caption=caption,
            )
        )
    blocks += [
        Paragraph(
            f"cases {c.cases}: answerable {c.answerable} (averaged), unanswerable {c.unanswerable} (excluded), "
            f"missing {c.missing} (scored 0), {_errors_count(c)}"
        ),
        Paragraph(
            f"policy: nDCG gain {_given(policy.get('gain'))}, relevance threshold "
            f"{_given(policy.get('relevance_threshold'))}"
            + (f", top {policy['max_depth']} per case (--max-depth)" if policy.get("max_depth") else "")
        ),
    ]
    return Section("metrics", "Metrics", tuple(blocks))


def _errors_count(c: EvalCounts) -> str:
    """``errors 9 (scored 0)``; with failed unanswerable cases ``errors 12 (9 answerable, scored 0; 3
    unanswerable, not scored)``: every failed case is counted."""
    if not c.unanswerable_errors:
        return f"errors {c.errors} (scored 0)"
    return (
        f"errors {c.errors + c.unanswerable_errors} ({c.errors} answerable, scored 0; "
        f"{c.unanswerable_errors} unanswerable, not scored)"
    )


def _changes_section(m: Measured) -> Section:
    """Against the baseline: what changed significantly (or that nothing did), the forest plot, every
    metric's paired comparison and the queries that moved most on the primary metric."""
    rows = m.comparisons
    how = (
        f"paired randomization test, Holm-corrected across {len(rows)} metrics, alpha {m.alpha:g}; "
        f"intervals: {delta_ci_label([c.data for c in rows])}"
    )
    significant = [c for c in rows if c.significant]
    blocks: list[Block] = []
    if not significant:
        blocks.append(Paragraph(f"No significant change against {m.baseline} ({how})."))
    else:
        blocks.append(
            Items(
                f"Significant changes against {m.baseline} ({how}):",
                tuple(
                    (
                        c.metric,
                        f"{_signed(c.delta)} [{_signed(c.ci[0] if c.ci else None, 3)}, "
                        f"{_signed(c.ci[1] if c.ci else None, 3)}], {fmt_p(c.p_value_corrected)}, "
                        f"{c.wins} queries better, {c.losses} worse",
                    )
                    for c in significant
                ),
            )
        )
    blocks += [
        forest("paired deltas against the baseline with confidence intervals", [(c.metric, c) for c in rows]),
        Table(
            (
                Column("metric"),
                Column("baseline", "number"),
                Column("this run", "number"),
                *delta_columns(rows, "Δ", short=False),
            ),
            tuple((c.metric, c.baseline_mean, c.system_mean, *delta_values(c)) for c in rows),
            cut=False,
        ),
    ]
    primary = next(iter(significant or rows), None)
    if primary is not None:
        for moved, word in (
            (primary.most_regressed, "most regressed"),
            (primary.most_improved, "most improved"),
        ):
            if moved:
                blocks.append(
                    Items(
                        f"{word} on {primary.metric}:",
                        tuple((str(q.get("id")), _signed(number(q.get("delta")), 3)) for q in moved),
                    )
                )
    return Section("changes", "Changes", tuple(blocks))


def _given(value: object) -> str:
    """A setting as written, ``–`` where the report leaves it out (as a missing cell reads)."""
    return "–" if value is None or value == "" else str(value)


def _ms(value: float | None) -> str:
    """Milliseconds to one decimal; ``–`` where the report has none (never a made-up 0.0)."""
    return "–" if value is None else f"{value:.1f}"


def _signed(value: float | None, digits: int = 4) -> str:
    """A delta in a sentence (``+0.0123``; ``–`` where missing, as a ``signed`` cell reads)."""
    return "–" if value is None else f"{value:+.{digits}f}"


def _latency_section(report: EvalReport) -> Section | None:
    latency = report.latency
    if latency is None:
        return None
    blocks: list[Block] = [
        Paragraph(
            f"latency ms: p50 {_ms(latency.p50)}  p95 {_ms(latency.p95)}  p99 {_ms(latency.p99)}"
            + (f" ({report.latency_basis})" if report.latency_basis else "")
        )
    ]
    if report.latencies:
        markers = tuple(
            (name, value)
            for name, value in (("p50", latency.p50), ("p95", latency.p95), ("p99", latency.p99))
            if value is not None
        )
        caption = (
            f"Latency of {len(report.latencies)} queries (ms), with percentiles; the few slowest, when "
            "they would stretch the axis, are counted in the last (red) bar."
        )
        blocks.append(Histogram("latency histogram", report.latencies, markers, caption=caption))
    return Section("latency", "Latency", tuple(blocks))


def _problems_section(report: EvalReport) -> Section | None:
    blocks: list[Block] = []
    if report.missing:
        blocks.append(
            Items(
                f"missing from the run ({len(report.missing)}, scored 0):",
                tuple((m, "") for m in report.missing),
                "",
            )
        )
    if report.errors:
        unanswerable = sum(1 for _, error in report.errors if error.startswith(UNANSWERABLE))
        how = (
            f"{len(report.errors) - unanswerable} answerable, scored 0; {unanswerable} unanswerable, not scored"
            if unanswerable
            else "scored 0"
        )
        blocks.append(
            Items(
                f"errors ({len(report.errors)}{': ' if unanswerable else ', '}{how}):", tuple(report.errors)
            )
        )
    return Section(PROBLEMS, "Missing & errors", tuple(blocks)) if blocks else None


KIND = EvalKind()
