"""The tenant audit's leak table as a document block: every foreign chunk served, one row each, with the
probe, who asked (and how: top_k, round, request, the request mutation when the audit sent one), the
chunk, its rank, its owner, how the owner was established and, for a chunk found in the response's
fields, the JSON path. A report lists the first ``--max-records`` leaks; the table says "first N of M"."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ragaudit.report.document import Column, Table, Value


def _how(asked: Mapping[str, Any] | None) -> str | None:
    if not asked:
        return None
    parts = [
        f"top_k {asked.get('top_k')}",
        f"round {asked.get('round')}",
        f"request #{asked.get('sequence')}",
    ]
    if asked.get("mutation"):
        parts.append(f"mutation {asked['mutation']}")
    return ", ".join(parts)


def _paths(record: Mapping[str, Any]) -> str | None:
    fields = record.get("fields")
    paths = (
        [str(f.get("path")) for f in fields if isinstance(f, Mapping) and f.get("path")]
        if isinstance(fields, list)
        else []
    )
    return ", ".join(dict.fromkeys(paths)) or None


def leak_table(records: Sequence[Mapping[str, Any]], total: int) -> Table:
    """One row per leak record (``leaks.records`` of a tenant-audit report); ``total`` leaks were found."""
    rows: list[tuple[Value, ...]] = []
    for r in records:
        probe = r.get("probe")
        caller = str(r.get("caller"))
        asked = r.get("asked")
        owners = r.get("owner")
        rank = r.get("rank")
        rows.append(
            (
                str(probe.get("id")) if isinstance(probe, Mapping) else None,
                repr(caller) + (" (hostile id)" if r.get("hostile_caller") is True else ""),
                _how(asked if isinstance(asked, Mapping) else None),
                str(r.get("chunk_id")),
                rank if isinstance(rank, int) and rank else "beside the results",
                ", ".join(map(str, owners)) if isinstance(owners, list) else None,
                str(r.get("attributed_by")),
                _paths(r),
            )
        )
    columns = (
        Column("probe", "id"), Column("asked as"), Column("how asked"), Column("chunk", "id"),
        Column("rank"), Column("owner"), Column("attributed by"), Column("JSON path"),
    )  # fmt: skip
    return Table(columns, tuple(rows), total=max(total, len(rows)))
