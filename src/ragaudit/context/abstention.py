"""Abstention: does the retriever's top score tell answerable from unanswerable questions, and does the
assistant decline when it should?

**Retrieval side.** Each case's *top score* is the score of its first retrieved item (a case with no
results has top score ``-inf``: nothing to answer from). With answerable cases as positives and
unanswerable probes as negatives::

    AUROC = P(top score of a random answerable case > that of a random unanswerable one)
            + ½ · P(equal)

computed from ranks (Mann-Whitney U with mid-ranks for ties): ``(R₊ − n₊(n₊+1)/2) / (n₊·n₋)`` where
``R₊`` is the sum of the positives' ranks. 0.5 is chance, 1.0 a perfect separation. A gate "answer
when top score >= t" is then chosen to maximise abstention accuracy::

    accuracy(t)  = (|answerable with s >= t| + |unanswerable with s < t|) / N
    coverage(t)  = |answerable with s >= t| / |answerable|

Ties in accuracy go to the lower threshold (more answerable questions answered). Scores are
compared as given, so the figure is meaningful only when one scorer ranks every case (BM25 scores of
different tenants' indexes are roughly, not exactly, comparable). Cases that errored or were never
run are left out and counted.

**Generation side.** An answer *declines* when it says the context does not hold the answer
(:data:`DECLINE_PATTERNS`, case-insensitive, e.g. "I don't know", "the context does not mention",
"no information about"). Reported: the share of unanswerable probes declined (higher is better) and
of answerable cases declined (lower is better).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

DECLINE_PATTERNS: tuple[str, ...] = (
    r"\bI (?:do not|don't|cannot|can't|could not|couldn't|am unable to|was unable to) "
    r"(?:know|find|answer|say|tell|determine|confirm|see|locate)\b",
    r"\bI(?:'m| am) (?:not sure|unsure|unable)\b",
    r"\b(?:context|documents?|sources?|passages?|excerpts?|provided (?:text|information|material)|knowledge base)"
    r" (?:does|do|did) not (?:say|mention|contain|specify|state|include|provide|cover|answer|address|discuss)",
    r"\bnot (?:mentioned|specified|stated|covered|included|provided|addressed|answered|available) in the "
    r"(?:provided |given |retrieved )?(?:context|documents?|sources?|passages?|information)",
    r"\bno (?:information|mention|details?|data|answer|indication)"
    r"(?:\s+(?:about|on|regarding|of|in|for|is|was|available)\b|\s*[.,;]|\s*$)",
    r"\b(?:unable|not able) to (?:answer|find|determine|confirm)\b",
    r"\b(?:insufficient|not enough) (?:information|context|details)\b",
    r"^\s*(?:unknown|n/?a|none|no answer)\s*\.?\s*$",
)
_DECLINE = re.compile("|".join(f"(?:{p})" for p in DECLINE_PATTERNS), re.IGNORECASE)


def is_decline(answer: str) -> bool:
    """True when ``answer`` is empty or says the context does not hold the answer."""
    return not answer.strip() or _DECLINE.search(answer) is not None


def midranks(values: Sequence[float]) -> list[float]:
    """1-based ranks of ``values`` in ascending order, tied values sharing their mean rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        mean_rank = (i + j) / 2 + 1
        for position in range(i, j + 1):
            ranks[order[position]] = mean_rank
        i = j + 1
    return ranks


def auroc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """Area under the ROC curve of scores separating ``positives`` (higher) from ``negatives``.

    Rank-based with mid-ranks for ties (see the module docstring); NaN when either side is empty.
    Scores may be ``-inf`` (no result) but not NaN.
    """
    n_pos, n_neg = len(positives), len(negatives)
    if not n_pos or not n_neg:
        return math.nan
    values = [*positives, *negatives]
    if any(math.isnan(v) for v in values):
        raise ValueError("scores must not be NaN")
    ranks = midranks(values)
    rank_sum = sum(ranks[:n_pos])
    return (rank_sum - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)


@dataclass(frozen=True)
class ThresholdChoice:
    """The best "answer when top score >= threshold" gate (``threshold`` ``None``: abstain always)."""

    threshold: float | None
    accuracy: float
    answerable_coverage: float
    unanswerable_abstained: float

    def to_json(self) -> dict[str, Any]:
        out = asdict(self)
        if self.threshold is not None and math.isinf(self.threshold):
            out["threshold"] = None  # -inf: answer everything (only cases with no result abstain)
            out["answer_all"] = True
        return out


def best_threshold(positives: Sequence[float], negatives: Sequence[float]) -> ThresholdChoice | None:
    """The threshold maximising abstention accuracy (ties: higher coverage); ``None`` without cases."""
    n_pos, n_neg = len(positives), len(negatives)
    if not n_pos and not n_neg:
        return None
    candidates = [*sorted({*positives, *negatives}), math.inf]
    best: ThresholdChoice | None = None
    for t in candidates:
        answered = sum(1 for s in positives if s >= t)
        abstained = sum(1 for s in negatives if s < t)
        choice = ThresholdChoice(
            None if math.isinf(t) and t > 0 else t,
            (answered + abstained) / (n_pos + n_neg),
            answered / n_pos if n_pos else math.nan,
            abstained / n_neg if n_neg else math.nan,
        )
        if best is None or choice.accuracy > best.accuracy:
            best = choice
    return best


def top_score(entry: Mapping[str, Any]) -> float | None:
    """A report case's top retrieval score: its first item's score, ``-inf`` with no results, ``None``
    when the case errored, was not run, or its first item has no score."""
    if entry.get("status") in ("error", "missing") or entry.get("answered") is False:
        return None
    retrieved = entry.get("retrieved") or []
    if not retrieved:
        return -math.inf
    score = retrieved[0].get("score")
    return float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None


def retrieval_abstention(per_case: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """AUROC of the top score and the best threshold, from an eval report's ``per_case`` entries."""
    positives: list[float] = []
    negatives: list[float] = []
    left_out = 0
    for entry in per_case:
        score = top_score(entry)
        if score is None:
            left_out += 1
        elif entry.get("answerable", entry.get("status") != "unanswerable"):
            positives.append(score)
        else:
            negatives.append(score)
    value = auroc(positives, negatives)
    choice = best_threshold(positives, negatives)
    return {
        "score": "top retrieval score",
        "answerable": len(positives),
        "unanswerable": len(negatives),
        "left_out": left_out,
        "auroc": None if math.isnan(value) else value,
        "best_threshold": choice.to_json() if choice is not None else None,
        "note": ""
        if negatives and positives
        else "AUROC needs answerable and unanswerable cases with scores",
    }


def generated_abstention(declined: Iterable[tuple[bool, bool]]) -> dict[str, Any]:
    """From ``(answerable, declined)`` per answered case: how often the assistant declined, by class."""
    pairs = list(declined)
    unanswerable = [d for a, d in pairs if not a]
    answerable = [d for a, d in pairs if a]
    return {
        "unanswerable": len(unanswerable),
        "declined_unanswerable": sum(unanswerable),
        "abstention_rate": sum(unanswerable) / len(unanswerable) if unanswerable else None,
        "answerable": len(answerable),
        "declined_answerable": sum(answerable),
        "false_abstention_rate": sum(answerable) / len(answerable) if answerable else None,
    }
