"""A check's verdict in three states: **pass**, **fail** or **not verified** (with the reason).

One value, made where the check runs and printed as is by every renderer (terminal, JSON, Markdown,
HTML, history, gates), so no renderer can say more than was checked:

- ``pass``: every item the check covers was checked and none failed (``verified == total > 0``);
- ``fail``: at least one item failed (whatever else could not be checked);
- ``not_verified``: nothing failed, but some (or all) items could not be checked, or there was
  nothing to check; ``reason`` says why, and the counts say how much was checked.

Only ``pass`` earns a check mark. This module imports nothing from ragaudit, so the evaluation,
the report code and the gates can all use it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

TENANT_ISOLATION = "tenant isolation"
"""The name of the tenant-isolation check, as every report, gate and history row spells it."""

POLICY_LOWERED = "lowered by the policy"
"""How a gate's pass says it rests on a floor the policy lowered below its default (the HTML header
shows such a pass's summary beside its badge, as it shows a failure's)."""

VerdictState = Literal["pass", "fail", "not_verified"]
STATES: tuple[VerdictState, ...] = ("pass", "fail", "not_verified")
LABELS: dict[VerdictState, str] = {"pass": "pass", "fail": "FAIL", "not_verified": "NOT VERIFIED"}
"""How the terminal and the gate print each state."""
MARKS: dict[VerdictState, str] = {"pass": "✓", "fail": "✗", "not_verified": "?"}
"""The mark each state gets in HTML and Markdown (only a pass gets a check mark)."""


@dataclass(frozen=True)
class CheckVerdict:
    """The outcome of one check over ``total`` items (e.g. tenant isolation over returned chunks)."""

    check: str
    state: VerdictState
    reason: str
    """One sentence: what was found, or why it could not be verified."""
    verified: int = 0
    """Items whose outcome was established (checked clean or found failing)."""
    total: int = 0
    """Items the check should cover."""
    failures: int = 0
    methods: Mapping[str, int] = field(default_factory=dict)
    """How the verified items were established: ``{method: items}`` (e.g. ``{"corpus": 40}``)."""

    @property
    def unverified(self) -> int:
        return max(self.total - self.verified, 0)

    @property
    def passed(self) -> bool:
        return self.state == "pass"

    @property
    def label(self) -> str:
        return LABELS[self.state]

    @property
    def mark(self) -> str:
        return MARKS[self.state]

    def line(self) -> str:
        """``tenant isolation: NOT VERIFIED - responses carry no tenant_id ...`` (one line for a log)."""
        return f"{self.check}: {self.label} - {self.reason}"

    def to_json(self) -> dict[str, Any]:
        return {
            "check": self.check,
            "state": self.state,
            "reason": self.reason,
            "verified": self.verified,
            "unverified": self.unverified,
            "total": self.total,
            "failures": self.failures,
            "methods": dict(self.methods),
        }

    @classmethod
    def from_json(cls, data: object) -> CheckVerdict | None:
        """The verdict :meth:`to_json` wrote; ``None`` for anything else."""
        if not isinstance(data, Mapping) or data.get("state") not in STATES:
            return None
        methods = data.get("methods")

        def count(key: str) -> int:
            value = data.get(key)
            return value if isinstance(value, int) and not isinstance(value, bool) else 0

        return cls(
            str(data.get("check", "check")),
            data["state"],
            str(data.get("reason", "")),
            count("verified"),
            count("total"),
            count("failures"),
            {str(k): int(v) for k, v in methods.items() if isinstance(v, int)}
            if isinstance(methods, Mapping)
            else {},
        )


def decide(
    check: str,
    *,
    total: int,
    verified: int,
    failures: int,
    methods: Mapping[str, int] | None = None,
    found: str,
    unverified_because: str,
) -> CheckVerdict:
    """The verdict of ``failures`` failing items among ``verified`` checked ones out of ``total``.

    ``found`` names what a failure is (``"cross-tenant chunk(s)"``); ``unverified_because`` says why
    the unchecked items could not be checked. Fail beats not verified; pass needs every item checked.
    """
    methods = {k: v for k, v in (methods or {}).items() if v}
    how = ", ".join(f"{n} by {m}" for m, n in methods.items())
    checked = f"{verified} of {total} checked" + (f" ({how})" if how else "")
    if failures:
        rest = f"; {total - verified} not verified: {unverified_because}" if verified < total else ""
        return CheckVerdict(
            check, "fail", f"{failures} {found} found; {checked}{rest}", verified, total, failures, methods
        )
    if total == 0:
        return CheckVerdict(
            check, "not_verified", f"nothing to check: {unverified_because}", 0, 0, 0, methods
        )
    if verified < total:
        return CheckVerdict(
            check,
            "not_verified",
            f"{total - verified} of {total} not verified: {unverified_because}"
            + (f"; no {found} among the {verified} checked" if verified else ""),
            verified,
            total,
            0,
            methods,
        )
    return CheckVerdict(check, "pass", f"no {found}; {checked}", verified, total, 0, methods)


def not_verified(check: str, reason: str) -> CheckVerdict:
    """A check that did not run at all."""
    return CheckVerdict(check, "not_verified", reason)


def golden_question_isolation(data: object) -> CheckVerdict | None:
    """The isolation verdict a run of golden questions recorded (an eval report's ``security.isolation``,
    a benchmark pipeline's ``isolation``), as such a run can earn it: each question is asked by its own
    tenant, which tests no isolation, so a recorded ``pass`` (an older ragaudit, a hand-edited file) is
    read as ``not_verified`` with that reason. Only a cross-tenant audit earns a pass."""
    found = CheckVerdict.from_json(data)
    if found is None or found.state != "pass":
        return found
    return CheckVerdict(
        found.check,
        "not_verified",
        f"recorded as a pass ({found.reason}), but golden questions asked by their own tenants test no "
        "isolation; verify it with 'ragaudit audit-tenants'",
        found.verified,
        found.total,
        0,
        found.methods,
    )


def isolation_of(report: Mapping[str, Any]) -> CheckVerdict | None:
    """The tenant-isolation verdict an eval report records (``security.isolation``); for a report without
    one (written before verdicts had three states): fail when it lists leaks, else not verified.
    ``None`` for a report with no security section. A recorded pass is read as not verified
    (:func:`golden_question_isolation`), so no page, gate or history row shows it green."""
    security = report.get("security")
    if not isinstance(security, Mapping):
        return None
    found = golden_question_isolation(security.get("isolation"))
    if found is not None:
        return found
    leaks = security.get("leaks")
    count = leaks if isinstance(leaks, int) and not isinstance(leaks, bool) else 0
    if count:
        return CheckVerdict(
            TENANT_ISOLATION, "fail", f"{count} cross-tenant chunk(s) found", count, count, count
        )
    return not_verified(
        TENANT_ISOLATION, "the report records no tenant-isolation verdict (written by an older ragaudit)"
    )
