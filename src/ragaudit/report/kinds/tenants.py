"""The per-tenant section the eval, compare and benchmark kinds share (issue 26.4), built once as a
document section from the reports' ``tenant_slices`` and ``tenant_comparisons``
(:mod:`ragaudit.evaluation.slices`).

* **Slices**: per metric and tenant, the mean over the tenant's answerable cases, its 95% CI and n (a
  benchmark: per pipeline too). One tenant: no table (its slice is the overall figures).
* **Paired tests per tenant** (compare, benchmark): per system, metric and tenant, the delta against the
  baseline, its CI, the Holm-corrected p and n. A tenant that regresses significantly while the
  overall delta of the same system and metric is not a significant loss is marked ``▼ hidden`` in its
  row and named in a line above the table: the mean hides it.

A tenant with too few cases is printed with "too few cases to judge (< 5)" and never called significant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragaudit.artifacts.tables import fmt_p
from ragaudit.report.document import (
    Block,
    Column,
    DotPlot,
    Lead,
    Marked,
    Paragraph,
    Section,
    Span,
    Table,
    Value,
)
from ragaudit.report.kinds.fields import Fields, Paired, count, interval, number

HIDDEN = " ▼ hidden"
"""The mark of a tenant's significant loss that the overall delta does not show."""


@dataclass(frozen=True)
class TenantFigure:
    """One metric of one tenant's slice."""

    tenant: str
    metric: str
    mean: float | None
    ci: tuple[float, float] | None
    n: int | None
    enough: bool
    failed: int = 0
    """Cases of the tenant that failed (scored 0): an error (no tenant to ask as) or no result."""


@dataclass(frozen=True)
class TenantSlices:
    """A report's (or a benchmark pipeline's) ``tenant_slices`` with two tenants or more."""

    pipeline: str | None
    level: float
    method: str
    min_cases: Any
    figures: tuple[TenantFigure, ...]

    @classmethod
    def read(cls, value: Any, pipeline: str | None = None) -> TenantSlices | None:
        """The slices at ``value`` (None without them or with one tenant: nothing to slice)."""
        if not isinstance(value, Mapping):
            return None
        tenants = [t for t in value.get("tenants", []) if isinstance(t, Mapping)]
        if len(tenants) < 2:
            return None
        metrics = list(dict.fromkeys(m for t in tenants for m in _mapping(t.get("metrics"))))
        figures = []
        for metric in metrics:  # grouped by metric: the tenants of one metric read side by side
            for t in tenants:
                f = _mapping(_mapping(t.get("metrics")).get(metric))
                ci = f.get("ci")
                n = f.get("n", t.get("n"))
                figures.append(
                    TenantFigure(
                        str(t.get("tenant")),
                        metric,
                        number(f.get("mean")),
                        interval(ci),
                        count(n),
                        t.get("enough") is not False,
                        failed if isinstance(failed := t.get("failed"), int) else 0,
                    )
                )
        level = number(value.get("level"))
        return cls(
            pipeline,
            0.95 if level is None else level,
            str(value.get("method") or ""),
            value.get("min_cases"),
            tuple(figures),
        )


@dataclass(frozen=True)
class TenantPaired:
    """One paired test of a system against the baseline within one tenant."""

    tenant: str
    enough: bool
    paired: Paired


@dataclass(frozen=True)
class TenantComparisons:
    """A report's ``tenant_comparisons``, with two tenants or more."""

    test: str
    correction_text: str
    alpha: Any
    min_cases: Any
    rows: tuple[TenantPaired, ...]
    ci_level: float | None = None
    """The level of the deltas' CIs (Bonferroni over the family: ``1 - alpha/m``)."""

    @classmethod
    def read(cls, report: Fields) -> TenantComparisons | None:
        section = report.obj("tenant_comparisons", required=False)
        rows = tuple(
            TenantPaired(str(r.opt("tenant")), r.opt("enough") is not False, Paired.read(r))
            for r in section.each("rows", required=False)
        )
        if len({r.tenant for r in rows}) < 2:
            return None
        return cls(
            str(section.opt("test") or "paired test per tenant"),
            str(section.opt("correction_text") or "Holm"),
            section.opt("alpha"),
            section.opt("min_cases"),
            rows,
            number(section.opt("ci_level")),
        )


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _few(enough: bool, min_cases: Any) -> str | None:
    return None if enough else f"too few cases to judge (< {min_cases})"


def hidden(row: TenantPaired, overall: Mapping[tuple[str, str], Paired]) -> bool:
    """A significant loss in this tenant while the overall delta of its system and metric is not one."""
    p = row.paired
    if not (row.enough and p.significant and p.delta is not None and p.delta < 0):
        return False
    mean = overall.get((p.system, p.metric))
    return mean is None or not (mean.significant and mean.delta is not None and mean.delta < 0)


def slices_table(slices: Sequence[TenantSlices]) -> Table:
    """Per (pipeline,) metric and tenant: the mean, its CI and n (and "too few cases" where so)."""
    level = slices[0].level
    with_pipeline = any(s.pipeline is not None for s in slices)
    with_note = any(not f.enough or f.failed for s in slices for f in s.figures)
    columns = (
        *((Column("pipeline"),) if with_pipeline else ()),
        Column("metric"),
        Column("tenant", "id"),
        Column("mean", "number"),
        Column(f"{level:.0%} CI", "interval", digits=3),
        Column("n", "count"),
        *((Column("note"),) if with_note else ()),
    )
    rows = tuple(
        (
            *((s.pipeline,) if with_pipeline else ()),
            f.metric,
            f.tenant,
            f.mean,
            Span(*(f.ci or (None, None))),
            f.n,
            *((_slice_note(f, s.min_cases),) if with_note else ()),
        )
        for s in slices
        for f in s.figures
    )
    return Table(columns, rows, cut=False, name="tenants")


def _slice_note(f: TenantFigure, min_cases: Any) -> str | None:
    """Too few cases, and how many failed (scored 0, so the slice's mean is not the retriever's)."""
    failed = f"{f.failed} of {f.n} failed, scored 0 (see the errors)" if f.failed and f.n else None
    return "; ".join(n for n in (_few(f.enough, min_cases), failed) if n) or None


def slices_plot(s: TenantSlices) -> DotPlot:
    """Each tenant's mean of every metric with its CI (one axis per metric; a chart on the page)."""
    metrics = tuple(dict.fromkeys(f.metric for f in s.figures))
    tenants = tuple(dict.fromkeys(f.tenant for f in s.figures))
    at = {(f.tenant, f.metric): f for f in s.figures}
    series = tuple((t, tuple(at[t, m].mean if (t, m) in at else None for m in metrics)) for t in tenants)
    intervals = tuple((t, tuple(at[t, m].ci if (t, m) in at else None for m in metrics)) for t in tenants)
    title = "each tenant's mean with its CI" + (f" ({s.pipeline})" if s.pipeline else "")
    return DotPlot(title, metrics, series, None, intervals)


def comparisons_blocks(
    tests: TenantComparisons, overall: Sequence[Paired], baseline: str | None
) -> tuple[Block, ...]:
    """The hidden regressions in a line each, then the per-tenant paired tests."""
    means = {(c.system, c.metric): c for c in overall}
    found = [r for r in tests.rows if hidden(r, means)]
    leads: list[Block] = []
    for r in found:
        p, mean = r.paired, means.get((r.paired.system, r.paired.metric))
        said = (
            f"overall {mean.delta:+.4f} ({fmt_p(mean.p_value_corrected)}, not a significant loss)"
            if mean is not None and mean.delta is not None
            else "no overall comparison"
        )
        leads.append(
            Lead(
                "Hidden regression",
                f"▼ {p.system} on {p.metric} in tenant {r.tenant}: {p.delta:+.4f} "
                f"({fmt_p(p.p_value_corrected)}) against {baseline or 'the baseline'}, while {said}",
            )
        )
    columns: tuple[Column, ...] = (
        Column("system"),
        Column("metric"),
        Column("tenant", "id"),
        Column("baseline", "number"),
        Column("system", "number"),
        Column("delta", "signed"),
        Column(f"{tests.ci_level:.2%} CI" if tests.ci_level else "CI", "interval", digits=3),
        Column("p (Holm)", "p_value"),
        Column("n", "count"),
        Column("note"),
    )
    rows: list[tuple[Value, ...]] = []
    for r in tests.rows:
        p = r.paired
        mark = HIDDEN if r in found else ("*" if p.significant else "")
        tone = ("down" if (p.delta or 0) < 0 else "up") if p.significant else ""
        delta = Marked(p.delta, mark, strong=p.significant, tone=tone) if mark else p.delta
        note = _few(r.enough, tests.min_cases) or (
            "regresses while the overall mean does not" if r in found else None
        )
        rows.append(
            (
                p.system,
                p.metric,
                r.tenant,
                p.baseline_mean,
                p.system_mean,
                delta,
                Span(*(p.ci or (None, None))),
                p.p_value_corrected,
                p.n,
                note,
            )
        )
    meaning = Paragraph(
        f"per tenant vs {baseline or 'the baseline'}: {tests.test}; * = significant at alpha {tests.alpha} "
        f"after {tests.correction_text}; ▼ hidden = a significant loss in one tenant that the overall "
        "delta does not show"
    )
    if all(row[-1] is None for row in rows):  # no note to give: no note column
        columns, rows = columns[:-1], [row[:-1] for row in rows]
    return (*leads, Table(columns, tuple(rows), cut=False, name="tenant-tests"), meaning)


def tenants_section(
    slices: Sequence[TenantSlices],
    tests: TenantComparisons | None = None,
    overall: Sequence[Paired] = (),
    baseline: str | None = None,
) -> Section | None:
    """The per-tenant section: hidden regressions first, the paired tests per tenant, then each metric's
    mean, CI and n per tenant (None when the report has one tenant or no slices)."""
    blocks: list[Block] = []
    if tests is not None:
        blocks += comparisons_blocks(tests, overall, baseline)
    if slices:
        s = slices[0]
        blocks += [
            Paragraph(
                f"per tenant: mean [{s.level:.0%} CI] over each tenant's answerable cases ({s.method})"
            ),
            *(slices_plot(s) for s in slices),
            slices_table(slices),
        ]
    return Section("tenants", "Per tenant", tuple(blocks)) if blocks else None
