"""The ``tenant-audit`` report kind (ragaudit audit-tenants): probes asked as other tenants, and what leaked.

Its document, findings first: the tenant-isolation verdict (pass / FAIL / NOT VERIFIED with its reason
and how many chunks were checked) and the audit's verdict, how many chunks were checked, the leaks
(counts per class and per owner -> caller, the leak table) and, when isolation is not verified, what
could not be checked (unattributed chunks, unverified requests); then the request mutations (which
found foreign chunks, which the service rejected), then what was asked and answered (errors,
unverified requests, hostile tenant ids, unattributed chunks). The typed view is :mod:`.tenant_view`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ragaudit.report.document import Block, Document, Lead, Paragraph, Section, Verdict
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.fields import Fields
from ragaudit.report.kinds.tenant_asking import asking_blocks, mutation_blocks, reason_blocks
from ragaudit.report.kinds.tenant_leaks import leak_blocks
from ragaudit.report.kinds.tenant_view import TenantAuditReport, read_audit

VERDICTS = {
    "clean": "clean (no foreign chunk served)",
    "leak": "LEAK (release blocker)",
    "incomplete": "incomplete, NOT VERIFIED (too many failed or unverified requests to prove isolation)",
    "not-verified": "NOT VERIFIED (returned chunks could not be attributed to a tenant)",
}
"""The audit's verdict in words (after ``verdict: ``)."""
STOPPED_VERDICT = (
    "incomplete, NOT VERIFIED (the service could not be reached, so the audit stopped; "
    "fix: check the service is up and its address: --endpoint, --retriever or --qdrant-url)"
)


def verdict_text(report: TenantAuditReport) -> str:
    """``LEAK (release blocker)``: the audit's verdict in words (an early stop says how to fix it)."""
    if report.stopped and report.verdict == "incomplete":
        return STOPPED_VERDICT
    if report.verdict == "clean" and not report.isolation.passed:  # an older report: its clean is unearned
        return f"clean as the audit wrote it, but tenant isolation is {report.isolation.label} (see above)"
    return VERDICTS.get(report.verdict, report.verdict)


def _checked(report: TenantAuditReport) -> str:
    allowed = (
        " (allowed by --allow-unattributed)" if report.unattributed and report.unattributed_allowed else ""
    )
    return (
        f"chunks checked {report.checked_chunks}, unattributed {report.unattributed}{allowed}, "
        f"label mismatches {report.label_mismatches}"
    )


class TenantAuditKind(ReportKind):
    name = "tenant-audit"
    required = ("verdict", "tenants", "probes", "asking", "errors", "leaks", "hostile_tenants")

    def typed(self, report: Fields) -> TenantAuditReport:
        return read_audit(report)

    def title(self, report: Mapping[str, Any]) -> str | None:
        source = report.get("source")
        label = source.get("label") if isinstance(source, Mapping) else None
        return f"tenant isolation of {label}" if label else "tenant isolation audit"

    def pipeline(self, report: Mapping[str, Any]) -> Mapping[str, Any] | None:
        source = report.get("source")
        found = source.get("pipeline") if isinstance(source, Mapping) else None
        return found if isinstance(found, Mapping) else None

    def document(self, report: TenantAuditReport) -> Document:
        """The verdicts and the leaks, the request mutations, what was asked and answered."""
        iso = report.isolation
        findings: list[Block] = [
            Verdict(iso.check, iso.state, iso.reason),
            Lead("Verdict", verdict_text(report)),
        ]
        if report.stopped:
            findings.append(Paragraph(f"STOPPED EARLY: {report.stopped}"))
        findings += [Paragraph(_checked(report)), *leak_blocks(report)]
        unchecked = iso.state == "not_verified"  # then what was not checked is the finding
        if unchecked:
            findings += reason_blocks(report)
        sections = [Section("tenant-audit", "Tenant isolation audit", tuple(findings))]
        mutations = mutation_blocks(report.asking.mutations, stopped=bool(report.stopped))
        if mutations:
            sections.append(Section("audit-mutations", "Request mutations", tuple(mutations)))
        sections.append(
            Section(
                "audit-asking",
                "Requests, errors and hostile tenant ids",
                tuple(asking_blocks(report, reasons=not unchecked)),
            )
        )
        return Document(tuple(sections))


KIND = TenantAuditKind()
