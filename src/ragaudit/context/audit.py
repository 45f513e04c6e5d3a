"""Put it together: context quality, answer checks, attribution and abstention, added to an eval report.

The eval report (``ragaudit eval --out`` shape) is augmented, not replaced: every ``per_case`` entry
gains ``context_quality`` and, when answers are checked, ``answer``, ``declined``, ``grounded``,
``unsupported``, ``correct``, ``groundedness`` (the details), ``attribution`` and
``attribution_reason`` (and ``judge``, advisory, when an LLM judge ran). Top-level sections:
``context_quality`` (settings and summary), ``abstention`` (retrieval, and generated when answers
were checked), ``groundedness`` and ``attribution`` (counts, rates, examples). ``kind`` becomes
``context`` or ``check-answers``.

A case with no answer (absent from the answers file, or the endpoint failed) has ``attribution: null``
and ``answer_error``; it is counted under ``groundedness.no_answer`` and in no quadrant.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ragaudit.context.abstention import generated_abstention, retrieval_abstention
from ragaudit.context.answers import Answer
from ragaudit.context.assemble import AssembledContext, ChunkLookup, assemble_context
from ragaudit.context.attribution import attribute, summarize_attribution
from ragaudit.context.context_metrics import (
    DUPLICATE_THRESHOLD,
    ContextMetrics,
    context_metrics,
    required_spans,
    spans_outside,
    summarize_context,
)
from ragaudit.context.groundedness import GroundednessChecker
from ragaudit.context.judge import JudgeVerdict, summarize_judge
from ragaudit.context.sources import RetrievalSource
from ragaudit.context.tokens import TokenCounter
from ragaudit.data.schema import GoldenCase


@dataclass(frozen=True)
class ContextOptions:
    """How contexts are assembled and judged."""

    k: int = 5
    token_budget: int | None = None
    threshold: int = 1
    duplicate_threshold: float = DUPLICATE_THRESHOLD

    def to_json(self, counter: TokenCounter, chunking: str) -> dict[str, Any]:
        return {
            "k": self.k,
            "token_budget": self.token_budget,
            "relevance_threshold": self.threshold,
            "duplicate_threshold": self.duplicate_threshold,
            "duplicate_measure": "Jaccard of word 3-shingles",
            "chunking": chunking,
            **counter.info(),
        }


def build_contexts(
    source: RetrievalSource,
    counter: TokenCounter,
    options: ContextOptions,
    answers: Mapping[str, Answer] | None = None,
) -> dict[str, AssembledContext]:
    """Every case's context: the retrieved top-k, or the chunks an answer says it used."""
    entries = source.entries()
    contexts: dict[str, AssembledContext] = {}
    for case in source.dataset.cases:
        answer = answers.get(case.id) if answers is not None else None
        if answer is not None and answer.context_chunk_ids is not None and answer.error is None:
            ranked: list[tuple[str, float | None]] = [(i, None) for i in answer.context_chunk_ids]
            contexts[case.id] = assemble_context(
                ranked, case, source.lookup, counter, k=None, threshold=options.threshold, source="answers"
            )
        else:
            contexts[case.id] = assemble_context(
                source.ranked(entries.get(case.id)),
                case,
                source.lookup,
                counter,
                k=options.k,
                token_budget=options.token_budget,
                threshold=options.threshold,
            )
    return contexts


def scored_chunks(contexts: Iterable[AssembledContext], options: ContextOptions) -> dict[str, Any]:
    """Which chunks the context figures scored, counted over the cases: the retrieved top k, or the
    chunks an answer says it used (``context_chunk_ids`` of the answers file, taken as given). Two
    commands scoring different chunks give different figures; this says which."""
    counts = {"retrieved": 0, "answers": 0}
    for context in contexts:
        counts[context.source] += 1
    parts = []
    if counts["answers"]:
        parts.append(f"the answers file's context_chunk_ids for {counts['answers']} case(s)")
    if counts["retrieved"] or not parts:
        cut = f"top {options.k}" if options.k is not None else "list"
        budget = f" within {options.token_budget} tokens" if options.token_budget is not None else ""
        parts.append(f"the retrieved {cut}{budget} for {counts['retrieved']} case(s)")
    return {"scored_chunks": {**counts, "text": "context figures scored " + " and ".join(parts)}}


def add_context_quality(
    source: RetrievalSource,
    contexts: Mapping[str, AssembledContext],
    counter: TokenCounter,
    options: ContextOptions,
) -> dict[str, ContextMetrics]:
    """Add per-case ``context_quality`` and the top-level ``context_quality`` and ``abstention`` sections."""
    report = source.report
    entries = source.entries()
    metrics: dict[str, ContextMetrics] = {}
    pairs: list[tuple[bool, ContextMetrics]] = []
    texts = {d.doc_id: d.text for d in source.corpus.documents}
    for case in source.dataset.cases:
        figures = context_metrics(
            contexts[case.id],
            case,
            threshold=options.threshold,
            duplicate_threshold=options.duplicate_threshold,
            texts=texts,
        )
        metrics[case.id] = figures
        pairs.append((case.is_answerable(options.threshold), figures))
        entry = entries.get(case.id)
        if entry is not None:
            entry["context_quality"] = {**contexts[case.id].info(), **figures.to_json()}
    report["context_quality"] = {
        "settings": {
            **options.to_json(counter, source.lookup.chunking),
            **scored_chunks(contexts.values(), options),
        },
        "summary": summarize_context(pairs),
    }
    report["abstention"] = {"retrieval": retrieval_abstention(report.get("per_case", []))}
    report["kind"] = "context"
    if source.notes:
        report["notes"] = [*report.get("notes", []), *source.notes]
    return metrics


def missing_evidence(
    case: GoldenCase,
    context: AssembledContext,
    lookup: ChunkLookup,
    texts: Mapping[str, str],
    threshold: int = 1,
) -> list[tuple[str, str]]:
    """``(source id, text)`` of the required evidence spans outside the context (without spans: of the
    relevant chunks not in it)."""
    spans = required_spans(case, threshold)
    if spans:
        return [
            (s.doc_id, texts[s.doc_id][s.start : s.end])
            for s in spans_outside(context.chunks, spans, texts)
            if s.doc_id in texts
        ]
    out = []
    for chunk_id in sorted(case.relevant_set(threshold) - set(context.chunk_ids)):
        chunk = lookup.get(chunk_id)
        if chunk is not None:
            out.append((chunk_id, chunk.index_text))
    return out


def add_answer_checks(
    source: RetrievalSource,
    contexts: Mapping[str, AssembledContext],
    metrics: Mapping[str, ContextMetrics],
    answers: Mapping[str, Answer],
    checker: GroundednessChecker,
    *,
    answers_source: Mapping[str, Any],
    threshold: int = 1,
    judge: Mapping[str, JudgeVerdict] | None = None,
) -> None:
    """Check every case's answer; add the per-case fields and the ``groundedness``, ``attribution`` and
    ``abstention.generated`` sections (call :func:`add_context_quality` first)."""
    report = source.report
    entries = source.entries()
    checked: list[dict[str, Any]] = []
    declines: list[tuple[bool, bool]] = []
    no_answer = grounded = correct = incorrect = 0
    cases = [c for c in source.dataset.cases if c.id in entries]
    texts = {d.doc_id: d.text for d in source.corpus.documents}
    if checker.encoder is not None:  # one batch for every sentence to embed, not one per case
        to_embed: list[str] = []
        for case in cases:
            answer = answers.get(case.id)
            if answer is not None and answer.text:
                to_embed += checker.texts_to_embed(answer.text, contexts[case.id])
        checker.embed(to_embed)
    for case in cases:
        entry = entries[case.id]
        answer = answers.get(case.id)
        if answer is None or answer.text is None:
            entry.update(
                attribution=None,
                answer_error=answer.error if answer is not None else "no answer for this case",
            )
            no_answer += 1
            continue
        context = contexts[case.id]
        answerable = case.is_answerable(threshold)
        result = checker.check(answer.text, context, query=case.query, reference=case.answer)
        verdict = attribute(
            result,
            context,
            answerable=answerable,
            evidence_present=metrics[case.id].evidence_present,
            missing_evidence=missing_evidence(case, context, source.lookup, texts, threshold),
        )
        details = result.to_json()
        entry.update(
            query=case.query,
            answer=answer.text,
            declined=result.declined,
            grounded=result.grounded,
            unsupported=details["unsupported"],
            correct=result.correct,
            groundedness={k: details[k] for k in ("reference_check", "values", "sentences")},
            attribution=verdict.label,
            attribution_reason=verdict.reason,
        )
        if judge is not None and case.id in judge:
            entry["judge"] = judge[case.id].to_json()
        checked.append(entry)
        declines.append((answerable, result.declined))
        grounded += result.grounded and not result.declined
        correct += result.correct is True
        incorrect += result.correct is False
    report["groundedness"] = {
        **checker.info(),
        "answers_from": dict(answers_source),
        "checked": len(checked),
        "no_answer": no_answer,
        "declined": sum(d for _, d in declines),
        "grounded": grounded,
        "ungrounded": sum(1 for e in checked if not e["grounded"]),
        "correct": correct,
        "incorrect": incorrect,
        "not_verifiable": len(checked) - correct - incorrect,
        **({"judge": summarize_judge(list(judge.values()))} if judge else {}),
    }
    report["attribution"] = summarize_attribution(checked)
    report.setdefault("abstention", {})["generated"] = generated_abstention(declines)
    report["kind"] = "check-answers"


def judge_jobs(
    source: RetrievalSource, contexts: Mapping[str, AssembledContext], answers: Mapping[str, Answer]
) -> Sequence[tuple[str, str, str, str]]:
    """``(case id, question, context text, answer)`` for every case with an answer that does not decline."""
    from ragaudit.context.abstention import is_decline

    out = []
    for case in source.dataset.cases:
        answer = answers.get(case.id)
        if answer is not None and answer.text is not None and not is_decline(answer.text):
            out.append((case.id, case.query, contexts[case.id].prompt_text(), answer.text))
    return out
