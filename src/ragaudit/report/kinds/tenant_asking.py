"""How a tenant audit asked, as document blocks: the request mutations (what applied and was sent, which found
foreign chunks, which the service rejected, which did not apply), and what was asked and answered
(probes, requests, detection power, failed and unverified requests, hostile tenant ids, unattributed
chunks)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragaudit.report.document import Block, Column, Items, Paragraph, Table
from ragaudit.report.kinds.fields import count
from ragaudit.report.kinds.tenant_leaks import hostile_table
from ragaudit.report.kinds.tenant_view import TenantAuditReport

MUTATED_AXES = ("query-shape", "page-size", "pagination", "tenant-channel", "credential-conflict")
"""The axes of request mutations proper (the others are the plan's depth, concurrency and hostile ids)."""
EXCERPT = 80
"""Characters of an unattributed chunk's excerpt shown (the JSON report holds 160)."""


def _count(row: Mapping[str, Any], key: str) -> int:
    return count(row.get(key)) or 0


def _why(row: Mapping[str, Any]) -> str:
    """Why a mutation was not applicable, without the channel it needs (``"X sends only ..."``)."""
    reason = str(row.get("reason") or "no channel for it")
    return reason.split(": ", 1)[-1]


def _sent_line(applicable: int, mutated: int, requests: int, rejected: int, stopped: bool) -> str:
    """``request mutations: 37 of 40 applicable, 216 requests sent, 1 rejected by the service every
    time``; when none was sent, why (an audit that stopped early: the service could not be reached)."""
    head = f"request mutations: {applicable} of {mutated} applicable"
    if requests:
        return f"{head}, {requests} requests sent, {rejected} rejected by the service every time"
    if stopped and applicable:
        return f"{head}, none sent: the service could not be reached (the audit stopped early)"
    return f"{head}, none sent"


def mutation_blocks(rows: list[Mapping[str, Any]], *, stopped: bool = False) -> list[Block]:
    """What was applicable, sent, rejected or not applicable, then every row of the plan that found
    foreign chunks (``offset=10 (body): 412 foreign chunk(s)``) and every row the service rejected.
    ``stopped``: the audit stopped early (the service could not be reached)."""
    blocks: list[Block] = []
    mutated = [r for r in rows if r.get("axis") in MUTATED_AXES]
    if mutated:
        sent = [r for r in mutated if r.get("applicable")]
        skipped = [r for r in mutated if not r.get("applicable")]
        rejected = [
            r for r in sent if _count(r, "requests") and _count(r, "rejected") == _count(r, "requests")
        ]
        axes = ", ".join(dict.fromkeys(str(r.get("axis")) for r in skipped))
        requests = sum(_count(r, "requests") for r in sent)
        blocks.append(
            Paragraph(
                _sent_line(len(sent), len(mutated), requests, len(rejected), stopped)
                + f", {len(skipped)} not applicable"
                + (f" ({axes}: {_why(skipped[0])})" if skipped else "")
            )
        )
        unanswered = sum(_count(r, "failed") for r in sent)
        if unanswered:
            blocks.append(
                Paragraph(
                    f"{unanswered} mutated request(s) got no answer (no connection or a timeout): not checked"
                )
            )
        errored = [r for r in sent if _count(r, "errored")]
        if errored:
            blocks.append(
                Items(
                    "NOT CHECKED: mutated requests answered with a server error, a rate limit or a malformed "
                    "body (no results to check, and not a refusal):",
                    tuple(
                        (
                            str(r.get("mutation")),
                            f"{_count(r, 'errored')} of {_count(r, 'requests')} requests",
                        )
                        for r in errored
                    ),
                )
            )
    found = tuple(
        (str(r.get("mutation")), f"{_count(r, 'leaks')} foreign chunk(s)") for r in rows if _count(r, "leaks")
    )
    if found:
        blocks.append(Items("found by:", found))
    refused = tuple(
        (str(r.get("mutation")), f"{_count(r, 'rejected')} of {_count(r, 'requests')} requests rejected")
        for r in mutated
        if _count(r, "rejected")
    )
    if refused:
        blocks.append(
            Items("rejected mutations (refused by the service, not failures of the audit):", refused)
        )
    return blocks


def _joined(counts: Mapping[str, Any]) -> str:
    return ", ".join(f"{n} {k}" for k, n in counts.items())


def _retried(plain_retries: int) -> str:
    """Why a part's count may exceed its planned requests (the mutation table counts planned ones)."""
    return f"; {plain_retries:,} of them sent again in plain form after a refusal" if plain_retries else ""


def _rounds(rounds: int, stopped: str | None) -> str:
    """``in 3 rounds``, or, when the audit stopped before sending every planned request, that it did
    (the rounds were planned, not necessarily run)."""
    planned = f"{rounds} round{'s' if rounds != 1 else ''}"
    return f"before the audit stopped early ({planned} planned)" if stopped else f"in {planned}"


def asking_blocks(report: TenantAuditReport, reasons: bool = True) -> list[Block]:
    """Probes, requests, detection power, errors, hostile tenant ids (and the ones served data); with
    ``reasons``, the unverified requests and the unattributed chunks too (:func:`reason_blocks`: the
    document puts them among the findings when they are why isolation is not verified)."""
    asking, hostile = report.asking, report.hostile
    rejected = asking.rejected_top_k
    capped = f" (the service rejected top_k {', '.join(map(str, rejected))})" if rejected else ""
    blocks: list[Block] = [
        Paragraph(
            f"tenants {len(report.tenants)}, probes {report.probes} ({_joined(report.probes_by_kind)}), "
            f"top_k {report.top_k}"
        ),
        Paragraph(
            f"requests: {asking.requests:,} sent {_rounds(asking.rounds, report.stopped)} "
            f"({_joined(asking.by_part)}{_retried(asking.plain_retries)}); "
            f"top_k {', '.join(map(str, asking.top_k_values))}{capped}; "
            f"concurrency {', '.join(map(str, asking.concurrency_levels))}; owner asks first"
        ),
        Paragraph(f"detection power: {asking.detection_power}"),
        Paragraph(  # the error rate's base: hostile ids and mutations have lines of their own
            f"errors: {report.failed} of {report.requests} requests as the corpus's tenants failed"
            + (f" ({_joined(report.failed_by_kind)})" if report.failed else "")
            + "; hostile ids and mutations are counted on their own lines"
        ),
        *(_unverified(report) if reasons else []),
        Paragraph(
            f"hostile tenant ids: {hostile['requests']} requests ({hostile['refused']} refused, "
            f"{hostile['empty']} empty, {hostile['served']} served data"
            + (f", {hostile['failed']} not answered: no connection or timeout" if hostile["failed"] else "")
            + ")"
        ),
    ]
    served = hostile_table(report)
    if served is not None:
        what = "hostile-id requests that were served data"
        blocks += [*_listed(len(report.hostile_served), hostile["served"], what), served]
    return blocks + (_unattributed(report) if reasons else [])


def reason_blocks(report: TenantAuditReport) -> list[Block]:
    """What could not be checked: the unattributed chunks, the requests that failed even in plain form."""
    return [*_unattributed(report), *_unverified(report)]


def _unverified(report: TenantAuditReport) -> list[Block]:
    if not report.unverified:
        return []
    listed = report.unverified_records
    more = f"; the report lists the first {len(listed)}" if len(listed) < report.unverified else ""
    items = tuple(
        (f"probe {u.get('probe_id')} as {u.get('caller')!r} at top_k {u.get('top_k')}", str(u.get("reason")))
        for u in listed
    )
    intro = f"UNVERIFIED: {report.unverified} probe requests failed even in plain form (not checked){more}:"
    return [Items(intro, items)]


def _listed(listed: int, total: int, what: str) -> list[Block]:
    """What a table of the first records holds when the report lists fewer than there are."""
    return [Paragraph(f"the report lists the first {listed} of {total} {what}")] if listed < total else []


def _unattributed(report: TenantAuditReport) -> list[Block]:
    """The returned chunks nothing attributes to a tenant (the first ones the report lists)."""
    records = report.unattributed_records
    if not records:
        return []
    rows = tuple(
        (
            str(r.get("probe_id")),
            repr(r.get("caller")),
            str(r.get("chunk_id")),
            r.get("rank"),
            _short(r.get("excerpt")),
        )
        for r in records
    )
    columns = (
        Column("probe", "id"), Column("asked as"), Column("unattributed chunk", "id"), Column("rank", "count"),
        Column("excerpt"),
    )  # fmt: skip
    listed = _listed(len(records), report.unattributed, "unattributed chunks")
    return [*listed, Table(columns, rows, name="unattributed")]


def _short(text: Any, width: int = EXCERPT) -> str | None:
    """The first ``width`` characters of an excerpt (the JSON report holds it whole)."""
    if not isinstance(text, str):
        return None
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"
