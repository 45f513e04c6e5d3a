"""The per-tenant tables a command prints under its report (only when the report has more than one
tenant): each metric's mean, 95% CI and n per tenant (``tenant_slices`` of an eval report, or of each
``pipelines[]`` entry of a benchmark) and the paired test per tenant (``tenant_comparisons`` of a
compare or benchmark report; :mod:`ragaudit.evaluation.slices`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragaudit.artifacts.tables import fmt_number, fmt_p, render_table


def _mean_ci(figures: Mapping[str, Any] | None) -> str:
    if not isinstance(figures, Mapping) or figures.get("mean") is None:
        return "-"
    ci = figures.get("ci")
    interval = f" [{ci[0]:.2f}-{ci[1]:.2f}]" if isinstance(ci, Sequence) and len(ci) == 2 else ""
    return fmt_number(float(figures["mean"]), 3) + interval


def _trimmed(table: str) -> str:
    return "\n".join(line.rstrip() for line in table.splitlines())


def _few(row: Mapping[str, Any], min_cases: object) -> str:
    return "" if row.get("enough", True) else f"too few cases to judge (< {min_cases})"


def slice_table(slices: Mapping[str, Any], label: str | None = None) -> list[str]:
    """Per tenant: n and each metric's ``mean [95% CI]``; empty with one tenant or none."""
    tenants = [t for t in slices.get("tenants", []) if isinstance(t, Mapping)]
    if len(tenants) < 2:
        return []
    metrics = list(tenants[0].get("metrics", {}))
    minimum = slices.get("min_cases")
    rows = [
        [
            str(t["tenant"]),
            str(t.get("n", "")),
            *(_mean_ci(t["metrics"].get(m)) for m in metrics),
            _few(t, minimum),
        ]
        for t in tenants
    ]
    title = f"per tenant{f' ({label})' if label else ''}: mean [95% CI] over each tenant's answerable cases"
    return [title, _trimmed(render_table(["tenant", "n", *metrics, ""], rows, left=1))]


def comparison_table(section: Mapping[str, Any]) -> list[str]:
    """Per system, tenant and metric: the delta (``*``: significant after the correction) and p."""
    rows_in = [r for r in section.get("rows", []) if isinstance(r, Mapping)]
    if len({r.get("tenant") for r in rows_in}) < 2:
        return []
    minimum = section.get("min_cases")
    rows = [
        [
            str(r["tenant"]),
            str(r["system"]),
            str(r["metric"]),
            fmt_number(r.get("baseline_mean")),
            fmt_number(r.get("system_mean")),
            f"{r['delta']:+.4f}{'*' if r.get('significant') else ''}" if r.get("n") else "-",
            fmt_p(r.get("p_value_corrected"), prefix=False),
            str(r.get("n", "")),
            _few(r, minimum),
        ]
        for r in rows_in
    ]
    return [
        f"per tenant vs baseline: {section.get('test')}; * = significant at alpha {section.get('alpha')} "
        f"after {section.get('correction_text')}",
        _trimmed(
            render_table(
                ["tenant", "system", "metric", "baseline", "system", "delta", "p (Holm)", "n", ""], rows, 3
            )
        ),
    ]


def tenant_lines(report: Mapping[str, Any]) -> list[str]:
    """The per-tenant tables of any report that carries them (eval, compare, benchmark)."""
    lines: list[str] = []
    slices = report.get("tenant_slices")
    if isinstance(slices, Mapping):
        lines += slice_table(slices)
    for pipeline in report.get("pipelines", []) if isinstance(report.get("pipelines"), list) else []:
        if isinstance(pipeline, Mapping) and isinstance(pipeline.get("tenant_slices"), Mapping):
            lines += slice_table(pipeline["tenant_slices"], str(pipeline.get("name")))
    comparisons = report.get("tenant_comparisons")
    if isinstance(comparisons, Mapping):
        lines += comparison_table(comparisons)
    return lines
