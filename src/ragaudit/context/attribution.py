"""Failure attribution: was a bad answer the retriever's fault or the generator's?

The lesson's quadrants, decided per case from the context and the answer checks:

``retrieval_failure``
    No relevant chunk reached the context, and the answer is not verifiably right; or the answer states
    a value no context chunk supports but a required evidence span (or relevant chunk) the retriever
    missed does (partial evidence: the part the answer needed was not retrieved).
``generation_failure``
    Relevant evidence was in the context, yet the answer is wrong (contradicts the reference),
    unsupported by the context, incomplete, or declines. For unanswerable probes: the assistant answered
    with claims no context chunk supports (it made them up).
``faithful_to_bad_context``
    The answer follows a chunk it should not have: a value that contradicts the reference is stated by a
    non-relevant context chunk (obsolete, irrelevant, another plan's or tenant's page), or, without a
    reference, a value is stated only by stale or foreign chunks. For unanswerable probes: the assistant
    answered from the (necessarily irrelevant) context instead of declining.
``success``
    The answer is grounded and, with a reference, correct (or, without one, grounded with the evidence
    present); for unanswerable probes, the assistant declined.

Checks run in this order: a decline first, then following bad context, then success, then missed
evidence (values stated only by evidence that is not in the context), then no evidence at all, and
generation failure last. So the lesson's two warranty cases land apart: "12 months"
from a context holding only the superseded 12-month policy is ``faithful_to_bad_context``; "12 months"
from a context holding the current 24-month policy alone is ``generation_failure``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ragaudit.context.assemble import AssembledContext
from ragaudit.context.claims import extract_values
from ragaudit.context.groundedness import Groundedness

Attribution = Literal["retrieval_failure", "generation_failure", "faithful_to_bad_context", "success"]
LABELS: tuple[Attribution, ...] = (
    "success",
    "retrieval_failure",
    "generation_failure",
    "faithful_to_bad_context",
)
EXAMPLES_PER_LABEL = 3


@dataclass(frozen=True)
class Verdict:
    """A case's quadrant and the reason, in words."""

    label: Attribution
    reason: str


def _describe(chunk_ids: Iterable[str], context: AssembledContext) -> str:
    by_id = {c.chunk_id: c for c in context.chunks}
    parts = []
    for chunk_id in chunk_ids:
        chunk = by_id.get(chunk_id)
        tags = []
        if chunk is not None:
            if chunk.superseded:
                tags.append("superseded")
            elif chunk.grade == 0:
                tags.append("graded 0")
            if chunk.foreign:
                tags.append("another tenant's")
            if not tags and not chunk.relevant:
                tags.append("not relevant")
        parts.append(f"{' '.join(tags)} chunk {chunk_id}".strip())
    return ", ".join(parts)


def _followed_bad(result: Groundedness, context: AssembledContext) -> str | None:
    """Why the answer follows a chunk it should not, or ``None``."""
    by_id = {c.chunk_id: c for c in context.chunks}
    if result.reference is not None and result.reference.contradictions:
        for answer_value, reference_value in result.reference.contradictions:
            bad = [s for s in result.sources_of(answer_value) if s in by_id and not by_id[s].relevant]
            if bad:
                return (
                    f"states {answer_value.text} as in {_describe(bad, context)}; "
                    f"the reference says {reference_value.text}"
                )
        return None
    if result.reference is None or not result.reference.compared:
        for support in result.values:
            sources = [by_id[s] for s in support.sources if s in by_id]
            if sources and all(c.bad for c in sources):
                return f"states {support.value.text} only as in {_describe(support.sources, context)}"
    return None


def _problems(result: Groundedness) -> str:
    parts = []
    if result.reference is not None:
        if result.reference.contradictions:
            pairs = "; ".join(f"{a.text} (reference: {r.text})" for a, r in result.reference.contradictions)
            parts.append(f"contradicts the reference: {pairs}")
        if result.reference.missing:
            parts.append(
                f"states none of the reference values ({', '.join(v.text for v in result.reference.missing)})"
            )
    if result.unsupported:
        parts.append("unsupported: " + "; ".join(u.claim for u in result.unsupported[:5]))
    return ", ".join(parts) or "not verifiable"


def _missed_evidence(result: Groundedness, missing_evidence: Sequence[tuple[str, str]]) -> str | None:
    """Why an unsupported value points at evidence the retriever did not bring, or ``None``."""
    unsupported = [v.value for v in result.values if not v.sources and not v.in_question]
    for value in unsupported:
        for source, text in missing_evidence:
            if any(value.supported_by(v) for v in extract_values(text)):
                return f"the evidence stating {value.text} ({source}) was not in the context"
    return None


def attribute(
    result: Groundedness,
    context: AssembledContext,
    *,
    answerable: bool,
    evidence_present: bool,
    missing_evidence: Sequence[tuple[str, str]] = (),
) -> Verdict:
    """The quadrant of one answered case (rules in the module docstring).

    ``missing_evidence`` holds ``(source id, text)`` of the required evidence that is not in the context;
    an unsupported value stated there makes a retrieval failure even when other evidence was present.
    """
    if not answerable:
        if result.declined:
            return Verdict("success", "declined an unanswerable question")
        followed = [s for v in result.values for s in (*v.sources, *v.other_plan_sources)]
        followed += [s.best_chunk for s in result.sentences if s.supported and s.best_chunk]
        if followed:
            where = _describe(dict.fromkeys(followed), context)
            return Verdict("faithful_to_bad_context", f"answered an unanswerable question from {where}")
        return Verdict(
            "generation_failure", "answered an unanswerable question with claims no chunk supports"
        )
    if result.declined:
        if evidence_present:
            return Verdict("generation_failure", "declined although relevant evidence was in the context")
        return Verdict("retrieval_failure", "no relevant chunk in the context; the assistant declined")
    bad = _followed_bad(result, context)
    if bad is not None:
        return Verdict("faithful_to_bad_context", bad)
    correct = result.correct
    if result.grounded and (correct is True or (correct is None and evidence_present)):
        return Verdict("success", "grounded" + (" and matches the reference" if correct else ""))
    missed = _missed_evidence(result, missing_evidence)
    if missed is not None:
        return Verdict("retrieval_failure", f"{missed}; the answer {_problems(result)}")
    if not evidence_present:
        return Verdict(
            "retrieval_failure", "no relevant chunk in the context; the answer " + _problems(result)
        )
    return Verdict("generation_failure", "evidence was in the context, but the answer " + _problems(result))


def summarize_attribution(entries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Counts per quadrant and up to :data:`EXAMPLES_PER_LABEL` examples each, from per-case entries
    carrying ``id``, ``attribution``, ``attribution_reason`` and optionally ``query``/``answer``."""
    counts: dict[str, int] = dict.fromkeys(LABELS, 0)
    examples: dict[str, list[dict[str, Any]]] = {label: [] for label in LABELS}
    for entry in entries:
        label = entry.get("attribution")
        if label not in counts:
            continue
        counts[label] += 1
        if len(examples[label]) < EXAMPLES_PER_LABEL:
            examples[label].append(
                {
                    "id": entry.get("id"),
                    "query": entry.get("query"),
                    "answer": entry.get("answer"),
                    "reason": entry.get("attribution_reason"),
                }
            )
    total = sum(counts.values())
    return {
        "counts": counts,
        "rates": {label: (n / total if total else None) for label, n in counts.items()},
        "examples": examples,
    }
