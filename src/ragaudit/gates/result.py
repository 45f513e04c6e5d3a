"""What every gate returns (:class:`GateResult`: pass, fail, skip or not verified, with the findings that
explain a failure by its numbers) and the wording the gates and the pytest plugin share for scores, the
worst queries and a missed floor."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from ragaudit.artifacts.tables import fmt_p

Status = Literal["pass", "fail", "skip", "not_verified"]
WORST = 5


@dataclass(frozen=True)
class GateResult:
    """One gate's outcome: ``findings`` are the reasons it failed, ``notes`` what it did not check.

    ``not_verified``: the gate could not establish what it guards; it blocks the release (``passed`` is
    false) unless ``accepted`` (the policy waived it), and it never prints as a pass."""

    gate: str
    status: Status
    summary: str
    findings: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    numbers: Mapping[str, Any] = field(default_factory=dict)
    accepted: bool = False

    @property
    def passed(self) -> bool:
        return self.status in ("pass", "skip") or (self.status == "not_verified" and self.accepted)

    def to_json(self) -> dict[str, Any]:
        return {
            "gate": self.gate,
            "name": self.gate,
            "passed": self.passed,
            "messages": list(self.findings) or [self.summary],
            "status": self.status,
            "accepted": self.accepted,
            "summary": self.summary,
            "findings": list(self.findings),
            "notes": list(self.notes),
            "numbers": dict(self.numbers),
        }


def fmt_score(value: float, floor: float | None = None) -> str:
    """A score with 2 decimals, or 4 when 2 would round it up to ``floor`` (``0.61``, ``0.6996``)."""
    if not math.isfinite(value):
        return "nan"
    short = f"{value:.2f}"
    return f"{value:.4f}" if floor is not None and value < floor <= float(short) else short


def worst_queries(per_case: Mapping[str, float], n: int = WORST) -> str:
    """``id (value), ...`` of the ``n`` lowest-scoring cases (ties by id)."""
    ranked = sorted(per_case.items(), key=lambda kv: (kv[1], kv[0]))[:n]
    return ", ".join(f"{cid} ({fmt_score(v)})" for cid, v in ranked) or "none scored"


def floor_failure(
    metric: str, value: float | None, floor: float, per_case: Mapping[str, float]
) -> str | None:
    """``"nDCG@10 0.61 < floor 0.70; worst queries: ..."`` when ``value`` misses ``floor``, else ``None``."""
    if value is not None and math.isfinite(value) and value >= floor:
        return None
    shown = (
        "nan (no answerable case)" if value is None or not math.isfinite(value) else fmt_score(value, floor)
    )
    return f"{metric} {shown} < floor {fmt_score(floor)}; worst queries: {worst_queries(per_case)}"


def judge_drop(
    row: Mapping[str, Any], label: str, correction: str, limit: str, tolerance: float, alpha: float
) -> tuple[str | None, str | None]:
    """``(finding, note)`` for one paired comparison against the baseline (a row of
    :func:`ragaudit.evaluation.compare.compare_reports` or of the per-tenant comparisons): a drop beyond
    ``tolerance`` that is significant is a finding (with the most regressed queries); one that is not
    significant is a note, not counted (on a small golden set it is as likely noise); anything else is
    neither. Both read ``"<label> 0.61 vs baseline 0.70 (delta -0.0900, p=0.003 <correction>, 40 paired
    cases)"``; ``limit`` names the threshold in the finding (``"the tolerance"``,
    ``"max_tenant_regression"``)."""
    if not -row["delta"] > tolerance:  # (a NaN delta is no drop)
        return None, None
    where = (
        f"{label} {fmt_score(row['system_mean'])} vs baseline {fmt_score(row['baseline_mean'])} "
        f"(delta {row['delta']:+.4f}, {fmt_p(row['p_value_corrected'])} {correction}, {row['n']} paired cases)"
    )
    if row["significant"]:
        moved = ", ".join(f"{m['id']} ({m['delta']:+.2f})" for m in row["most_regressed"]) or "-"
        return (
            f"{where}: a significant regression beyond {limit} {tolerance} at alpha {alpha}; "
            f"most regressed queries: {moved}"
        ), None
    return None, f"{where}: dropped beyond the tolerance but not significantly; not counted"
