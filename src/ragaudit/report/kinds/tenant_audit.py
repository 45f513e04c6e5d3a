"""The ``tenant-audit`` report kind (ragaudit audit-tenants): probes asked as other tenants, and what leaked."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.fields import Fields
from ragaudit.verdict import TENANT_ISOLATION, CheckVerdict, not_verified

if TYPE_CHECKING:
    from ragaudit.report.html_parts import Section
    from ragaudit.report.view import ReportView

VERDICTS = {
    "clean": "verdict: clean (no foreign chunk served)",
    "leak": "verdict: LEAK (release blocker)",
    "incomplete": "verdict: incomplete, NOT VERIFIED (too many failed or unverified requests to prove isolation)",
    "not-verified": "verdict: NOT VERIFIED (returned chunks could not be attributed to a tenant)",
}


STOPPED_VERDICT = (
    "verdict: incomplete, NOT VERIFIED (the service could not be reached, so the audit stopped; "
    "fix: check the service is up and its address: --endpoint, --retriever or --qdrant-url)"
)


def audit_isolation(report: Fields) -> CheckVerdict:
    """The audit's tenant-isolation check in three states; for a report written before it had one: fail
    when it lists leaks, else not verified (its unattributed chunks were never judged)."""
    found = CheckVerdict.from_json(report.opt("isolation"))
    if found is not None:
        return found
    leaks = report.obj("leaks").opt("count")
    if isinstance(leaks, int) and leaks:
        return CheckVerdict(TENANT_ISOLATION, "fail", f"{leaks} foreign chunk(s) served", leaks, leaks, leaks)
    return not_verified(TENANT_ISOLATION, "the audit report records no isolation check (an older ragaudit)")


@dataclass(frozen=True)
class AuditLeak:
    """One foreign chunk served: which probe, asked as whom (how), and whose chunk it was."""

    probe_id: str
    caller: str
    hostile: bool
    asked: Mapping[str, Any] | None
    chunk_id: str
    rank: int
    owners: list[str]
    attributed_by: str
    claimed_tenant: str | None

    @classmethod
    def read(cls, leak: Fields) -> AuditLeak:
        asked = leak.opt("asked")
        return cls(
            str(leak.obj("probe").need("id")),
            str(leak.need("caller")),
            leak.opt("hostile_caller") is True,
            asked if isinstance(asked, Mapping) else None,
            str(leak.need("chunk_id")),
            int(leak.need("rank")),
            leak.texts("owner"),
            str(leak.need("attributed_by")),
            leak.opt("claimed_tenant"),
        )


@dataclass(frozen=True)
class AuditAsking:
    """How hard the audit looked: requests by part, rounds, the top_k values and concurrency levels."""

    requests: int
    by_part: dict[str, int]
    rounds: int
    top_k_values: list[int]
    rejected_top_k: list[int]
    concurrency_levels: list[int]
    detection_power: str
    mutations: list[Mapping[str, Any]] = field(default_factory=list)
    """The mutation table (``asking.mutations``): one row per mutation of every axis."""


@dataclass(frozen=True)
class TenantAuditReport:
    """A tenant-audit report, typed (every field the terminal shows is required)."""

    verdict: str
    tenants: list[str]
    top_k: int
    probes: int
    probes_by_kind: dict[str, int]
    asking: AuditAsking
    hostile: dict[str, int]
    """``requests``, ``refused``, ``empty`` and ``served`` of the hostile tenant ids."""
    requests: int
    failed: int
    failed_by_kind: dict[str, int]
    checked_chunks: int
    unattributed: int
    label_mismatches: int
    unverified: int
    unverified_records: list[Mapping[str, Any]]
    leaks: list[AuditLeak]
    leaks_by_pair: dict[str, int]
    isolation: CheckVerdict
    """The tenant-isolation check in three states (only ``pass`` is verified)."""
    unattributed_allowed: bool = False
    leak_count: int | None = None
    """Every leak found (the report lists the first ``--max-records``); ``None`` in older reports, which
    listed them all."""
    leaks_to_hostile: int | None = None
    leaks_by_class: dict[str, int] | None = None
    stopped: str | None = None
    """Why the audit stopped before sending every planned request (the service could not be reached)."""


class TenantAuditKind(ReportKind):
    name = "tenant-audit"
    required = ("verdict", "tenants", "probes", "asking", "errors", "leaks", "hostile_tenants")

    def typed(self, report: Fields) -> TenantAuditReport:
        asking, errors, leaks = report.obj("asking"), report.obj("errors"), report.obj("leaks")
        requests, hostile = asking.obj("requests"), report.obj("hostile_tenants")
        unverified = report.obj("unverified")
        return TenantAuditReport(
            verdict=str(report.need("verdict")),
            tenants=report.texts("tenants"),
            top_k=int(report.need("top_k")),
            probes=int(report.obj("probes").need("total")),
            probes_by_kind=dict(report.obj("probes").obj("by_kind").data),
            asking=AuditAsking(
                int(requests.need("total")),
                dict(requests.obj("by_part").data),
                int(asking.need("rounds")),
                list(asking.need("top_k_values")),
                list(asking.obj("max_top_k").need("rejected")),
                list(asking.need("concurrency_levels")),
                str(asking.obj("detection_power").need("statement")),
                [m for m in asking.opt("mutations") or [] if isinstance(m, Mapping)],
            ),
            hostile={
                **{k: int(hostile.need(k)) for k in ("requests", "refused", "empty", "served")},
                "failed": int(hostile.opt("failed") or 0),
            },
            requests=int(errors.need("total")),
            failed=int(errors.need("failed")),
            failed_by_kind=dict(errors.obj("by_kind").data),
            checked_chunks=int(report.need("checked_chunks")),
            unattributed=int(report.obj("unattributed").need("count")),
            label_mismatches=int(report.need("label_mismatches")),
            unverified=int(unverified.need("count")),
            unverified_records=[u.data for u in unverified.each("records")],
            leaks=[AuditLeak.read(leak) for leak in leaks.each("records")],
            leaks_by_pair=dict(leaks.obj("by_pair").data),
            isolation=audit_isolation(report),
            unattributed_allowed=report.obj("unattributed").opt("allowed") is True,
            leak_count=_int_or_none(leaks.opt("count")),
            leaks_to_hostile=_int_or_none(leaks.opt("to_hostile_ids")),
            leaks_by_class=dict(leaks.obj("by_class").data) if leaks.opt("by_class") is not None else None,
            stopped=_stopped(report.opt("stopped")),
        )

    def terminal(self, report: TenantAuditReport, limit: int = 10) -> list[str]:
        """Probes, how hard the audit looked, errors, what was checked, unverified requests, leaks, the verdict."""
        asking, hostile = report.asking, report.hostile
        rejected = asking.rejected_top_k
        capped = f" (the service rejected top_k {', '.join(map(str, rejected))})" if rejected else ""
        lines = [
            f"tenants {len(report.tenants)}, probes {report.probes} "
            f"({', '.join(f'{n} {k}' for k, n in report.probes_by_kind.items())}), top_k {report.top_k}",
            f"requests: {asking.requests} sent in {asking.rounds} rounds "
            f"({', '.join(f'{n} {part}' for part, n in asking.by_part.items())}); "
            f"top_k {', '.join(map(str, asking.top_k_values))}{capped}; "
            f"concurrency {', '.join(map(str, asking.concurrency_levels))}; owner asks first",
            *_mutation_lines(asking.mutations),
            f"hostile tenant ids: {hostile['requests']} requests ({hostile['refused']} refused, "
            f"{hostile['empty']} empty, {hostile['served']} served data"
            + (f", {hostile['failed']} not answered: no connection or timeout" if hostile["failed"] else "")
            + ")",
            f"detection power: {asking.detection_power}",
            f"errors: {report.failed} of {report.requests} requests failed"
            + (
                f" ({', '.join(f'{n} {k}' for k, n in report.failed_by_kind.items())})"
                if report.failed
                else ""
            ),
            f"chunks checked {report.checked_chunks}, unattributed {report.unattributed}"
            + (
                " (allowed by --allow-unattributed)"
                if report.unattributed and report.unattributed_allowed
                else ""
            )
            + f", label mismatches {report.label_mismatches}",
        ]
        if report.stopped:
            lines.append(f"STOPPED EARLY: {report.stopped}")
        if report.unverified:
            lines.append(
                f"UNVERIFIED: {report.unverified} probe requests failed even in plain form (not checked):"
            )
            lines += [
                f"  probe {u['probe_id']} as {u['caller']!r} at top_k {u['top_k']}: {u['reason']}"
                for u in report.unverified_records[:limit]
            ]
        if report.leaks or report.leak_count:
            lines += _leak_lines(report, limit)
        return [
            *lines,
            f"{report.isolation.line()}",
            STOPPED_VERDICT
            if report.stopped and report.verdict == "incomplete"
            else VERDICTS.get(report.verdict, f"verdict: {report.verdict}"),
        ]

    def markdown(self, view: ReportView) -> list[str]:
        """The isolation check in three states (a check mark only for a pass), what was asked, the leaks."""
        from ragaudit.artifacts.escape import escape_md as md
        from ragaudit.report.markdown import SECURITY_MARKS

        report = self.read(view)
        mark = SECURITY_MARKS[report.isolation.state]
        head = f"**{mark} {md(_headline(report), 600)}**"
        lines = [head, "", *(f"- {md(line)}" for line in _facts(report)), ""]
        if report.leaks:
            from ragaudit.report.kinds.tenant_leaks import leak_table
            from ragaudit.report.legacy_blocks import blocks_markdown

            lines += blocks_markdown([leak_table(_records(view.report), _total(report))])
        return lines

    def html(self, view: ReportView) -> list[Section]:
        from ragaudit.artifacts.escape import escape_html as esc

        report = self.read(view)
        tone = {"pass": "ok-line", "fail": "bad-line", "not_verified": "warn-line"}[report.isolation.state]
        facts = "".join(f"<li>{esc(line)}</li>" for line in _facts(report))
        head = f"{report.isolation.mark} {_headline(report)}"
        body = f'<p class="{tone}">{esc(head)}</p><ul>{facts}</ul>'
        if report.leaks:  # what leaked, not only how many (issue 24)
            from ragaudit.report.kinds.tenant_leaks import leak_table
            from ragaudit.report.legacy_blocks import blocks_html

            body += "<h3>Foreign chunks served</h3>" + blocks_html(
                [leak_table(_records(view.report), _total(report))]
            )
        return [("tenant-audit", "Tenant isolation audit", body)]


def _records(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The leak records as written (``leaks.records``)."""
    leaks = report.get("leaks")
    records = leaks.get("records") if isinstance(leaks, Mapping) else None
    return [r for r in records if isinstance(r, Mapping)] if isinstance(records, list) else []


def _headline(report: TenantAuditReport) -> str:
    iso = report.isolation
    word = {"pass": "verified", "fail": "FAILED", "not_verified": "NOT VERIFIED"}[iso.state]
    return f"Tenant isolation {word}: {iso.reason}"


def _facts(report: TenantAuditReport) -> list[str]:
    asking = report.asking
    return [
        f"verdict: {report.verdict}",
        f"{asking.requests} requests in {asking.rounds} rounds, top_k {', '.join(map(str, asking.top_k_values))}, "
        f"concurrency {', '.join(map(str, asking.concurrency_levels))}; detection power: {asking.detection_power}",
        f"{report.checked_chunks} returned chunks checked, {report.unattributed} unattributed"
        + (" (allowed)" if report.unattributed and report.unattributed_allowed else ""),
        f"{report.failed} of {report.requests} probe requests failed, {report.unverified} unverified",
        f"{_total(report)} foreign chunk(s) served"
        + (f" (the first {len(report.leaks)} listed)" if len(report.leaks) < _total(report) else ""),
        *[line.strip() for line in _mutation_lines(asking.mutations)],
        *([f"stopped early: {report.stopped}"] if report.stopped else []),
    ]


def _mutation_lines(rows: list[Mapping[str, Any]]) -> list[str]:
    """The request mutations in a few lines: what was sent, what was rejected or not applicable, what
    found leaks (``"offset=10 (body): 412 foreign chunk(s)"``)."""
    mutated = [
        r
        for r in rows
        if r.get("axis") in ("query-shape", "pagination", "tenant-channel", "credential-conflict")
    ]
    if not mutated:
        return []
    sent = [r for r in mutated if r.get("applicable")]
    skipped = [r for r in mutated if not r.get("applicable")]
    rejected = [r for r in sent if r.get("requests") and r.get("rejected") == r.get("requests")]
    lines = [
        f"request mutations: {len(sent)} of {len(mutated)} sent ({sum(int(r.get('requests', 0)) for r in sent)} "
        f"requests), {len(rejected)} rejected by the service every time, {len(skipped)} not applicable"
        + (
            f" ({', '.join(dict.fromkeys(str(r.get('axis')) for r in skipped))}: {_why(skipped[0])})"
            if skipped
            else ""
        )
    ]
    unanswered = sum(int(r.get("failed", 0)) for r in sent)
    if unanswered:
        lines.append(
            f"  {unanswered} mutated request(s) got no answer (no connection or a timeout): not checked"
        )
    found = [f"{r['mutation']}: {r['leaks']} foreign chunk(s)" for r in rows if r.get("leaks")]
    if found:
        lines.append(
            f"  found by: {'; '.join(found[:12])}" + (f"; {len(found) - 12} more" if len(found) > 12 else "")
        )
    return lines


def _why(row: Mapping[str, Any]) -> str:
    """Why a mutation was not applicable, without the channel it needs (``"X sends only ..."``)."""
    reason = str(row.get("reason") or "no channel for it")
    return reason.split(": ", 1)[-1]


def _stopped(found: Any) -> str | None:
    """The early stop of a report in words (``None`` when it sent every planned request)."""
    if not isinstance(found, Mapping):
        return None
    from ragaudit.security.audit_verdict import stopped_sentence

    return stopped_sentence(found.get("not_sent", "?"), found.get("reason", "no reason recorded"))


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _total(report: TenantAuditReport) -> int:
    """Every leak found: the stated count, or the records of a report that listed them all."""
    return report.leak_count if report.leak_count is not None else len(report.leaks)


def _leak_lines(report: TenantAuditReport, limit: int) -> list[str]:
    leaks, total = report.leaks, _total(report)
    hostile = [leak for leak in leaks if leak.hostile]
    to_hostile = report.leaks_to_hostile if report.leaks_to_hostile is not None else len(hostile)
    lines = [
        f"LEAKS: {total} foreign chunks served "
        f"({total - to_hostile} to other tenants, {to_hostile} to hostile tenant ids)"
    ]
    if report.leaks_by_class:
        lines.append("  by class: " + ", ".join(f"{k} {n}" for k, n in report.leaks_by_class.items()))
    if len(leaks) < total:
        lines.append(f"  the report lists the first {len(leaks)} of {total} leak records (--max-records)")
    lines += [f"  {pair}: {n}" for pair, n in report.leaks_by_pair.items() if "'" not in pair][:20]
    callers = list(dict.fromkeys(repr(leak.caller) for leak in hostile))
    if callers:
        more = f" and {len(callers) - 12} more" if len(callers) > 12 else ""
        lines.append(f"  hostile ids that were served data: {', '.join(callers[:12])}{more}")
    for leak in leaks[:limit]:
        asked = leak.asked
        how = (
            f" at top_k {asked['top_k']}, round {asked['round']}, request #{asked['sequence']}"
            if asked
            else ""
        )
        lines.append(
            f"  probe {leak.probe_id} asked as {leak.caller!r}{how}: {leak.chunk_id} "
            f"{f'at rank {leak.rank}' if leak.rank else '(beside the results)'} "
            f"belongs to {', '.join(leak.owners)} (by {leak.attributed_by}; labelled {leak.claimed_tenant!r})"
        )
    if len(leaks) > limit:
        lines.append(f"  ... {len(leaks) - limit} more listed in the report")
    return lines


KIND = TenantAuditKind()
