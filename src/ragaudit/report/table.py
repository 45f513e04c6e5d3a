"""Plain-text tables for the terminal (no dependency, aligned, numbers right-justified)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ragaudit.evaluation.result import EvalResult
from ragaudit.report.sections import delta_ci_label

__all__ = ["delta_cells", "delta_ci_label", "eval_table", "fmt_number", "render_table"]


def fmt_number(value: float | int | None, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    return "nan" if math.isnan(value) else f"{value:.{digits}f}"


def render_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def eval_table(result: EvalResult) -> str:
    """The metrics table plus counts, as ``ragaudit eval`` prints it."""
    rows = [[name, fmt_number(value)] for name, value in result.metrics.items()]
    table = render_table(["metric", "mean"], rows)
    c = result.counts
    counts = (
        f"cases {c.cases}: answerable {c.answerable} (averaged), unanswerable {c.unanswerable} (excluded), "
        f"missing {c.missing} (scored 0), errors {c.errors} (scored 0)"
    )
    gain = result.policy.gain
    lines = [
        table,
        counts,
        f"policy: nDCG gain {gain}, relevance threshold {result.policy.relevance_threshold}"
        + (f", top {result.policy.max_depth} per case (--max-depth)" if result.policy.max_depth else ""),
    ]
    latency = result.latency()
    if latency:
        lines.append(
            f"latency ms: p50 {latency['p50']:.1f}  p95 {latency['p95']:.1f}  p99 {latency['p99']:.1f}"
        )
    if result.missing:
        shown = ", ".join(result.missing[:10]) + (" ..." if len(result.missing) > 10 else "")
        lines.append(f"missing from the run: {shown}")
    for case in result.errors[:10]:
        lines.append(f"error in {case.id}: {case.error}")
    lines.append(result.tenant_isolation().line())
    leaks = result.leaks()
    if leaks:
        cases = len({leak["case_id"] for leak in leaks})
        lines.append(
            f"SECURITY: {len(leaks)} cross-tenant chunk(s) returned in {cases} case(s) - a release blocker"
        )
        for leak in leaks[:10]:
            lines.append(
                f"  leak in {leak['case_id']}: {leak['chunk_id']} (rank {leak['rank']}) owned by "
                f"{leak['claimed_tenant']!r}, asked as {leak['caller_tenant']!r}"
            )
    lines += [f"note: {n}" for n in result.notes[:10]]
    return "\n".join(lines)


def delta_cells(comparison: Mapping[str, Any]) -> list[str]:
    """The delta (``*`` when significant), its CI (at the level :func:`delta_ci_label` names), the
    Holm-corrected p-value and W/T/L of one paired comparison, as table cells (the shape of
    :func:`ragaudit.experiments.compare.compare_reports` rows)."""
    c = comparison
    low, high = c["ci"]
    return [
        f"{c['delta']:+.4f}{'*' if c['significant'] else ''}",
        f"[{low:+.4f}, {high:+.4f}]",
        fmt_number(c["p_value_corrected"]),
        f"{c['wins']}/{c['ties']}/{c['losses']}",
    ]
