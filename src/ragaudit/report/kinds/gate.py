"""The ``gate`` (ragaudit gate; its verdict renders in every report's header) report kind."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragaudit.report.document import Document, Items, Paragraph, Section
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.fields import Fields
from ragaudit.report.sections import overall_gate_state

MARKS = {"pass": "pass", "fail": "FAIL", "skip": "skip", "not_verified": "NOT VERIFIED"}


@dataclass(frozen=True)
class GateLine:
    """One gate of a verdict: ``name`` and ``passed`` are required; ``status`` is derived from
    ``passed`` where a hand-written verdict leaves it out."""

    name: str
    passed: bool
    status: str
    summary: str
    findings: list[str]
    notes: list[str]


@dataclass(frozen=True)
class GateReport:
    """A gate verdict, typed: ``passed`` and every gate's ``name`` and ``passed`` are required."""

    passed: bool
    state: str
    report: object
    policy_source: object
    gates: list[GateLine]


def _gate(g: Fields) -> GateLine:
    passed = g.need("passed") is True
    messages = g.texts("messages")
    summary = g.opt("summary")
    status = str(g.opt("status") or ("pass" if passed else "fail"))
    return GateLine(
        str(g.need("name")),
        passed,
        "fail" if status in ("pass", "skip") and not passed else status,  # never better than passed
        str(summary) if summary is not None else (messages[0] if messages else ""),
        g.texts("findings"),
        g.texts("notes"),
    )


class GateKind(ReportKind):
    name = "gate"
    required = ("passed", "gates")

    def gate(self, report: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """A gate report's verdict is its document (the page shows no second one in its header)."""
        return None

    def typed(self, report: Fields) -> GateReport:
        gates = [_gate(g) for g in report.each("gates")]
        passed = report.need("passed") is True
        state = overall_gate_state(report.opt("verdict"), passed, (g.status for g in gates))
        policy = report.obj("policy", required=False)
        return GateReport(passed, state, report.opt("report"), policy.opt("source"), gates)

    def document(self, report: GateReport) -> Document:
        """The verdict (pass / FAIL / NOT VERIFIED and why), then every gate with its findings and notes."""
        gates = report.gates
        failed = [g for g in gates if not g.passed]
        unverified = [g for g in gates if g.status == "not_verified"]
        skipped = sum(1 for g in gates if g.status == "skip")
        extra = f", {skipped} with nothing to check" if skipped else ""
        if report.state == "fail":
            head = f"ragaudit gate: FAIL ({len(failed)} of {len(gates)} gates failed)"
        elif unverified:
            names = ", ".join(g.name for g in unverified)
            blocked = "blocks the release" if not report.passed else "allowed by the policy"
            head = f"ragaudit gate: NOT VERIFIED ({names}: not verified, {blocked}{extra})"
        elif report.state != "pass":  # no gate, or only skipped ones: nothing was checked
            head = f"ragaudit gate: NOT VERIFIED (no gate checked anything: {len(gates)} gates{extra})"
        else:
            head = f"ragaudit gate: PASS ({len(gates)} gates{extra})"
        width = max((len(g.name) for g in gates), default=0)
        each = Items(
            "",
            tuple((f"[{MARKS.get(g.status, g.status)}] {g.name.ljust(width)}", g.summary) for g in gates),
            "  ",
            under=tuple(
                (*(f"- {f}" for f in g.findings if f != g.summary), *(f"note: {n}" for n in g.notes))
                for g in gates
            ),
        )
        blocks = (Paragraph(head), Paragraph(f"report {report.report}, policy {report.policy_source}"), each)
        return Document((Section("gate", "Gate", blocks),))


KIND = GateKind()
