"""The metric-semantics policy: every choice the field gets wrong, decided once and recorded in reports.

See ``docs/metrics.md`` for the reasoning behind each field.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

from ragaudit.errors import InputError
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
    max_depth: int | None = None
    """trec_eval's ``-M``: keep only each case's top ``max_depth`` results (in the run's order, which
    for run files is trec_eval's: score descending, doc id descending) before scoring; ``None`` keeps all."""

    def __post_init__(self) -> None:
        if self.gain not in ("exponential", "linear"):
            raise ValueError(f"unknown gain {self.gain!r}; use 'exponential' or 'linear'")
        if isinstance(self.relevance_threshold, bool) or not isinstance(self.relevance_threshold, int):
            raise ValueError("relevance_threshold must be an integer grade, e.g. 1")
        if self.relevance_threshold < 1:
            raise ValueError(
                f"relevance_threshold must be >= 1 (got {self.relevance_threshold}); grade 0 means judged non-relevant"
            )

        if self.max_depth is not None and (
            isinstance(self.max_depth, bool) or not isinstance(self.max_depth, int) or self.max_depth < 1
        ):
            raise ValueError(f"max_depth must be a positive integer (got {self.max_depth!r}), e.g. 100")

    def to_dict(self) -> dict[str, Any]:
        return {"version": POLICY_VERSION, **asdict(self)}


def no_answerable_case(path: str, threshold: int, top_grade: int | None) -> InputError:
    """The error for a dataset with no answerable case (every ranking metric would be undefined).

    ``top_grade`` is the highest grade judged anywhere in the dataset (``None``: no judgment).
    """
    if top_grade is not None and top_grade >= 1:
        why = f"no judged item has grade >= {threshold} (the highest grade is {top_grade})"
        fix = f"lower --relevance-threshold to {top_grade} or below, or label relevant items"
    else:
        why = "no case has a relevant item (every case is an unanswerable probe)"
        fix = "label at least one relevant chunk per answerable case (relevant_chunk_ids or a grade >= 1)"
    return InputError(path, None, f"no case can be scored: {why}; ranking metrics are undefined", fix)
