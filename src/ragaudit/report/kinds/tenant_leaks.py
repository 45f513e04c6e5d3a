"""What a tenant audit found, as document blocks: how many foreign chunks were served (to other tenants,
to hostile tenant ids), counted by class and by owner -> caller, and the leak table: one row per leak
record with the probe, who asked and how (top_k, round, request), the request mutation, the chunk, its
rank, its owner, the label the service put on it, how the owner was established and the JSON paths of
the foreign values. A report lists the first ``--max-records`` leaks: the blocks say so, and every cut
table says "first N of M"."""

from __future__ import annotations

from ragaudit.report.document import Block, Column, Heading, Paragraph, Table, Value
from ragaudit.report.kinds.tenant_view import AuditLeak, TenantAuditReport

SHOWN_PATHS = 3
"""JSON paths shown per leak row (the record in the JSON report holds them all)."""
LEAK_COLUMNS = (
    Column("probe", "id"), Column("asked as"), Column("how asked"), Column("mutation"), Column("chunk", "id"),
    Column("rank"), Column("owner"), Column("labelled"), Column("attributed by"), Column("JSON path"),
)  # fmt: skip


def _how(leak: AuditLeak) -> str | None:
    asked = leak.asked
    if not asked:
        return None
    return f"top_k {asked.get('top_k')}, round {asked.get('round')}, request #{asked.get('sequence')}"


def _paths(leak: AuditLeak) -> str | None:
    shown = ", ".join(leak.paths[:SHOWN_PATHS])
    more = len(leak.paths) - SHOWN_PATHS
    return (shown + (f" (+{more} more)" if more > 0 else "")) or None


def leak_row(leak: AuditLeak) -> tuple[Value, ...]:
    return (
        leak.probe_id,
        repr(leak.caller) + (" (hostile id)" if leak.hostile else ""),
        _how(leak),
        leak.mutation,
        leak.chunk_id,
        leak.rank if leak.rank else "beside the results",
        ", ".join(leak.owners),
        leak.claimed_tenant,
        leak.methods,
        _paths(leak),
    )


def leak_table(leaks: list[AuditLeak]) -> Table:
    """One row per leak record; the table holds every record of the JSON report (cut by the back-ends)."""
    return Table(LEAK_COLUMNS, tuple(leak_row(leak) for leak in leaks), name="leaks")


def leak_blocks(report: TenantAuditReport) -> list[Block]:
    """The leaks, when there are any: the total, the classes, the pairs, the records."""
    total = report.leak_total
    if not total:
        return []
    to_hostile = report.leaks_to_hostile
    if to_hostile is None:
        to_hostile = sum(1 for leak in report.leaks if leak.hostile)
    blocks: list[Block] = [
        Paragraph(
            f"LEAKS: {total} foreign chunks served "
            f"({total - to_hostile} to other tenants, {to_hostile} to hostile tenant ids)"
        )
    ]
    if report.leaks_by_class:
        blocks.append(
            Table(
                (Column("leak class (where: how attributed)"), Column("foreign chunks", "count")),
                tuple(report.leaks_by_class.items()),
                cut=False,
                name="leak-classes",
            )
        )
    pairs = [(pair, n) for pair, n in report.leaks_by_pair.items() if "'" not in pair]
    if pairs:  # owner -> caller among the tenants; the hostile ids have their own table
        blocks.append(
            Table(
                (Column("owner -> caller"), Column("foreign chunks", "count")),
                tuple(pairs),
                name="leak-pairs",
            )
        )
    if report.leaks:
        blocks.append(Heading("Foreign chunks served"))
        if len(report.leaks) < total:
            blocks.append(
                Paragraph(
                    f"the report lists the first {len(report.leaks)} of {total} leak records "
                    f"(--max-records); the counts above cover all {total}"
                )
            )
        blocks.append(leak_table(report.leaks))
    return blocks


def hostile_table(report: TenantAuditReport) -> Table | None:
    """The hostile-id requests that were served data (the first ones the report lists)."""
    if not report.hostile_served:
        return None
    rows = tuple((h.caller, h.description, h.probe_id, h.returned, h.leaks) for h in report.hostile_served)
    columns = (
        Column("hostile id"), Column("what it is"), Column("probe", "id"), Column("returned", "count"),
        Column("foreign chunks", "count"),
    )  # fmt: skip
    return Table(columns, rows, name="hostile-served")
