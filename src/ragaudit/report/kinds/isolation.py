"""The tenant-isolation section every kind that returns chunks shows (eval, context, check-answers): the
verdict as the report records it (three states: only a verified pass is a pass) and every cross-tenant
leak it lists (case, chunk, rank, owner, who asked)."""

from __future__ import annotations

from collections.abc import Sequence

from ragaudit.report.document import Block, Column, Paragraph, Section, Table, Verdict
from ragaudit.report.kinds.fields import Leak
from ragaudit.verdict import CheckVerdict


def isolation_section(isolation: CheckVerdict | None, leaks: Sequence[Leak]) -> Section | None:
    """The tenant-isolation verdict as recorded (only a verified pass is a pass), then every leak."""
    if isolation is None:
        return None
    blocks: list[Block] = [Verdict(isolation.check, isolation.state, isolation.reason)]
    if leaks:
        cases = len({leak.case_id for leak in leaks})
        blocks += [
            Paragraph(
                f"SECURITY: {len(leaks)} cross-tenant chunk(s) returned in {cases} case(s) - a release blocker"
            ),
            Table(
                (
                    Column("case", "id"),
                    Column("chunk", "id"),
                    Column("rank", "count"),
                    Column("owner", "id"),
                    Column("asked as", "id"),
                ),
                tuple(
                    (k.case_id, k.chunk_id, k.rank, k.claimed_tenant or "(unlabelled)", k.caller_tenant)
                    for k in leaks
                ),
                name="leaks",
            ),
        ]
    return Section("security", "Security", tuple(blocks))
