"""Plain-text tables for the terminal (no dependency, aligned, numbers right-justified)."""

from __future__ import annotations

from ragaudit.artifacts.tables import delta_cells, delta_ci_label, fmt_number, render_table
from ragaudit.evaluation.result import EvalResult

__all__ = ["delta_cells", "delta_ci_label", "eval_table", "fmt_number", "render_table"]
"""``eval_table`` renders an eval result; the plain table helpers live in :mod:`ragaudit.artifacts.tables`."""


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
