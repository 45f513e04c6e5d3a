"""The metric-semantics policy: every choice the field gets wrong, decided once and recorded in reports.

See ``docs/metrics.md`` for the reasoning behind each field.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from ragaudit.metrics.pure import Gain

POLICY_VERSION = 1


@dataclass(frozen=True)
class Policy:
    """How ragaudit scores: fixed defaults, overridable where a field names alternatives."""

    gain: Gain = "exponential"
    """nDCG gain: ``2^rel - 1`` (exponential, the lesson's) or ``rel`` (linear, trec_eval / BEIR)."""
    relevance_threshold: int = 1
    """Where only grades are given, an item is relevant (binary metrics) when its grade >= this."""
    unanswerable: Literal["excluded"] = "excluded"
    """Cases with no relevant item are kept out of ranking averages and counted separately."""
    missing: Literal["zero"] = "zero"
    """Cases the system did not answer (absent from a run, errors, timeouts) score 0 and are listed."""
    duplicates: Literal["first-occurrence"] = "first-occurrence"
    """A repeated id counts once, at its first rank; later copies keep their slot and gain nothing."""
    ties: Literal["score-desc-docid-desc"] = "score-desc-docid-desc"
    """Run-file ties follow trec_eval: score descending, then document id descending."""
    precision_denominator: Literal["k"] = "k"
    """Precision@k divides by k even when fewer than k items were returned."""
    ideal: Literal["all-judged-positive"] = "all-judged-positive"
    """nDCG's ideal ranking uses every judged item with grade > 0, retrieved or not."""

    def __post_init__(self) -> None:
        if self.gain not in ("exponential", "linear"):
            raise ValueError(f"unknown gain {self.gain!r}; use 'exponential' or 'linear'")
        if isinstance(self.relevance_threshold, bool) or not isinstance(self.relevance_threshold, int):
            raise ValueError("relevance_threshold must be an integer grade, e.g. 1")
        if self.relevance_threshold < 1:
            raise ValueError(
                f"relevance_threshold must be >= 1 (got {self.relevance_threshold}); grade 0 means judged non-relevant"
            )

    def to_dict(self) -> dict[str, Any]:
        return {"version": POLICY_VERSION, **asdict(self)}
