"""The ``eval`` report kind (ragaudit eval / ragaudit.evaluate): one system on one dataset."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from ragaudit.artifacts.tables import fmt_number, render_table
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.fields import Fields, Holes, Latency, Leak
from ragaudit.verdict import CheckVerdict

if TYPE_CHECKING:
    from ragaudit.report.html_parts import Section
    from ragaudit.report.view import ReportView


@dataclass(frozen=True)
class EvalCounts:
    cases: int
    answerable: int
    unanswerable: int
    missing: int
    errors: int


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
    """``(case id, error)`` of every case that failed."""
    notes: list[str]
    policy: Mapping[str, Any]
    isolation: CheckVerdict | None
    leaks: list[Leak]
    """The cross-tenant leaks."""
    holes: Holes | None = None
    """The judged share of the top k (None in a report written before it was measured)."""
    latency_basis: str | None = None
    """How ``latency`` was measured (``retrieval.latency``: per query, or a batch's time / its size)."""


class EvalKind(ReportKind):
    name = "eval"
    required = ("metrics", "counts", "per_case[].id")
    schema: ClassVar[Mapping[str, Any]] = {"$ref": "#/$defs/eval_report"}
    problems_in_body = True

    def typed(self, report: Fields) -> EvalReport:
        counts = report.obj("counts")
        security = report.obj("security", required=False)
        retrieval = report.obj("retrieval", required=False)
        return EvalReport(
            metrics=dict(report.obj("metrics").data),
            counts=EvalCounts(
                *(int(counts.need(k)) for k in ("cases", "answerable", "unanswerable", "missing", "errors"))
            ),
            case_ids=[str(c.need("id")) for c in report.each("per_case")],
            latency=Latency.read(report.opt("latency_ms")),
            missing=report.texts("missing"),
            errors=[(str(e.need("id")), str(e.opt("error"))) for e in report.each("errors", required=False)],
            notes=report.texts("notes"),
            policy=report.obj("policy", required=False).data,
            isolation=CheckVerdict.from_json(security.opt("isolation")),
            leaks=Leak.all_in(report),
            holes=Holes.read(report.opt("holes")),
            latency_basis=basis if isinstance(basis := retrieval.opt("latency"), str) else None,
        )

    def terminal(self, report: EvalReport, limit: int = 10) -> list[str]:
        """The metrics table, the counts, the policy, latency, missing cases, errors, tenant isolation and leaks."""
        c, policy = report.counts, report.policy
        lines = [
            render_table(
                ["metric", "mean"], [[name, fmt_number(value)] for name, value in report.metrics.items()]
            ),
            f"cases {c.cases}: answerable {c.answerable} (averaged), unanswerable {c.unanswerable} (excluded), "
            f"missing {c.missing} (scored 0), errors {c.errors} (scored 0)",
            f"policy: nDCG gain {policy.get('gain')}, relevance threshold {policy.get('relevance_threshold')}"
            + (f", top {policy['max_depth']} per case (--max-depth)" if policy.get("max_depth") else ""),
        ]
        if report.holes is not None:
            from ragaudit.report.kinds.judged_power import holes_line

            lines.append(holes_line(report.holes))
        latency = report.latency
        if latency is not None:
            lines.append(
                f"latency ms: p50 {latency.p50 or 0:.1f}  p95 {latency.p95 or 0:.1f}  p99 {latency.p99 or 0:.1f}"
                + (f" ({report.latency_basis})" if report.latency_basis else "")
            )
        if report.missing:
            shown = ", ".join(report.missing[:limit]) + (" ..." if len(report.missing) > limit else "")
            lines.append(f"missing from the run: {shown}")
        lines += [f"error in {cid}: {error}" for cid, error in report.errors[:limit]]
        if report.isolation is not None:
            lines.append(report.isolation.line())
        if report.leaks:
            cases = len({leak.case_id for leak in report.leaks})
            lines.append(
                f"SECURITY: {len(report.leaks)} cross-tenant chunk(s) returned in {cases} case(s) - a release blocker"
            )
            lines += [
                f"  leak in {leak.case_id}: {leak.chunk_id} (rank {leak.rank}) owned by "
                f"{leak.claimed_tenant!r}, asked as {leak.caller_tenant!r}"
                for leak in report.leaks[:limit]
            ]
        return lines + [f"note: {n}" for n in report.notes[:limit]]

    def markdown(self, view: ReportView) -> list[str]:
        from ragaudit.report import markdown as md

        report: EvalReport = self.read(view)
        lines = [*md._metrics(view), "", *md._counts(report), ""]
        if report.holes is not None:
            from ragaudit.artifacts.escape import escape_md
            from ragaudit.report.kinds.judged_power import holes_line

            lines += [escape_md(holes_line(report.holes)), ""]
        lines += [*md._changes(view), *md._security(view)]
        return lines + md._problems(view.problems())

    def html(self, view: ReportView) -> list[Section]:
        from ragaudit.report.holes_power import holes_html
        from ragaudit.report.html import queries_section

        report: EvalReport = self.read(view)
        return [queries_section(view), *holes_html([report.holes] if report.holes else [])]


KIND = EvalKind()
