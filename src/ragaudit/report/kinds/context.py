"""The ``context`` (ragaudit context) report kind, and the terminal figures it shares with ``check-answers``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragaudit.artifacts.tables import fmt_number
from ragaudit.report.document import Column, Details, Document, Items, KeyValues, Paragraph, Section, Table
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.fields import Fields, Leak
from ragaudit.report.kinds.isolation import isolation_section
from ragaudit.verdict import CheckVerdict, isolation_of

QUALITY_FIGURES = (
    "precision_chunks",
    "precision_tokens",
    "evidence_coverage",
    "evidence_present_rate",
    "redundancy",
    "staleness",
    "tokens_mean",
)
ANSWER_FIGURES = (
    "checked",
    "grounded",
    "ungrounded",
    "declined",
    "no_answer",
    "correct",
    "incorrect",
    "not_verifiable",
)
"""``grounded + ungrounded + declined + no_answer = checked`` and ``correct + incorrect + not_verifiable
= checked`` (the terminal prints them so both sums can be read off)."""

WORST_SHOWN = 5
"""Worst cases printed by the terminal section (every case is in the report's ``per_case``)."""

FAILED_ATTRIBUTIONS = ("retrieval_failure", "generation_failure", "faithful_to_bad_context")
"""Attribution labels of an answer that went wrong, worst first (``success`` is the good one)."""

READING_GUIDE = (
    "context precision: share of context chunks (tokens) that are relevant; higher is better, low means "
    "the generator reads mostly noise (lower k or add a reranker)",
    "evidence coverage: share of the needed evidence that made it into the context; aim for ~1.0, "
    "below ~0.9 some answers cannot be grounded whatever the generator does",
    "redundancy (near-duplicate chunks) and staleness (superseded versions): 0 is best",
    "abstention AUROC: how well the top retrieval score separates answerable from unanswerable "
    "questions; 0.5 is chance, above ~0.8 a score threshold can decide when to decline",
)
"""What each figure means (the terminal prints it under ``how to read this:``, a page in a collapsed block)."""
ANSWER_GUIDE = (
    "answers: grounded = every claim is supported by the context; correct / incorrect compare with the "
    "reference answer (not_verifiable: no reference values to compare); declined answerable should be ~0",
    "attribution: retrieval_failure = the evidence never reached the context (fix retrieval);",
    "generation_failure = it did, the answer is still wrong (fix the prompt or model);",
    "faithful_to_bad_context = the answer follows a wrong or stale chunk (fix the corpus or ranking)",
)


@dataclass(frozen=True)
class ContextReport:
    """A context or check-answers report, typed. Every part is optional (a report of the context checks
    without answers has no ``groundedness``); a figure that is missing is None and prints as ``-``."""

    settings: dict[str, Any]
    """``k``, ``token_budget``, ``tokenizer`` and ``chunking`` of the context quality checks."""
    quality: dict[str, Any]
    """Each of :data:`QUALITY_FIGURES`."""
    auroc: Any
    best_threshold: dict[str, Any] | None
    """``threshold``, ``accuracy`` and ``answerable_coverage`` of the best abstention threshold."""
    answers: dict[str, Any] | None
    """Each of :data:`ANSWER_FIGURES` (None: the report checked no answers)."""
    abstention_rate: Any
    false_abstention_rate: Any
    attribution: dict[str, Any]
    worst: tuple[tuple[str, str, str], ...] = ()
    """The worst cases, worst first, as ``(case id, verdict, why)``: answers that went wrong (by
    attribution), else answerable cases whose context misses the most evidence."""
    failing: int = 0
    """How many cases are as bad as those in :attr:`worst` (it shows at most :data:`WORST_SHOWN`)."""
    isolation: CheckVerdict | None = None
    """The tenant-isolation verdict of the retrieval behind the contexts (None: not recorded)."""
    leaks: tuple[Leak, ...] = ()


def _worst(per_case: list[Fields]) -> tuple[tuple[tuple[str, str, str], ...], int]:
    """Answers that went wrong by attribution, worst kind first; without answers, answerable cases
    whose context lacks evidence (lowest coverage, then lowest precision)."""
    answered = [c for c in per_case if c.opt("attribution") in FAILED_ATTRIBUTIONS]
    if answered:
        answered.sort(key=lambda c: FAILED_ATTRIBUTIONS.index(c.opt("attribution")))
        rows = [
            (str(c.opt("id")), str(c.opt("attribution")), str(c.opt("attribution_reason") or ""))
            for c in answered
        ]
        return tuple(rows[:WORST_SHOWN]), len(rows)
    scored = []
    for case in per_case:
        quality = case.opt("context_quality")
        if not case.opt("answerable") or not isinstance(quality, dict):
            continue
        coverage, precision = quality.get("evidence_coverage"), quality.get("precision_chunks")
        if isinstance(coverage, (int, float)) and coverage < 1.0:
            why = f"evidence coverage {coverage:.2f}, precision {fmt_number(precision)}"
            stale = quality.get("stale_chunks") or []
            why += f", {len(stale)} stale chunk(s)" if stale else ""
            scored.append(
                (float(coverage), float(precision or 0.0), (str(case.opt("id")), "missing evidence", why))
            )
    scored.sort(key=lambda item: (item[0], item[1]))
    return tuple(row for _, _, row in scored[:WORST_SHOWN]), len(scored)


def _figures(part: Fields, keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: part.opt(k) for k in keys}


class ContextKind(ReportKind):
    name = "context"
    required = ()

    def typed(self, report: Fields) -> ContextReport:
        quality, abstention = (
            report.obj("context_quality", required=False),
            report.obj("abstention", required=False),
        )
        retrieval, generated = (
            abstention.obj("retrieval", required=False),
            abstention.obj("generated", required=False),
        )
        best = retrieval.obj("best_threshold", required=False)
        grounded = report.obj("groundedness", required=False)
        worst, failing = _worst(report.each("per_case", required=False))
        return ContextReport(
            _figures(
                quality.obj("settings", required=False),
                ("k", "token_budget", "tokenizer", "chunking", "scored_chunks"),
            ),
            _figures(quality.obj("summary", required=False), QUALITY_FIGURES),
            retrieval.opt("auroc"),
            _figures(best, ("threshold", "accuracy", "answerable_coverage")) if best.data else None,
            _figures(grounded, ANSWER_FIGURES) if grounded.data else None,
            generated.opt("abstention_rate"),
            generated.opt("false_abstention_rate"),
            dict(report.obj("attribution", required=False).obj("counts", required=False).data),
            worst,
            failing,
            isolation_of(report.data),
            tuple(Leak.all_in(report)),
        )

    def document(self, report: ContextReport) -> Document:
        """The settings, the figures (context quality, abstention, answers, attribution), the worst
        cases and how to read the figures, then the tenant-isolation verdict with any leaks."""
        rows: list[tuple[str, Any]] = [(f"context {key}", report.quality[key]) for key in QUALITY_FIGURES]
        rows.append(("abstention AUROC (top score)", report.auroc))
        best = report.best_threshold
        if best is not None:
            rows.append(("  best threshold", best["threshold"]))
            rows.append(("  abstention accuracy", best["accuracy"]))
            rows.append(("  answerable coverage", best["answerable_coverage"]))
        if report.answers is not None:
            rows += [(f"answers {key}", report.answers[key]) for key in ANSWER_FIGURES]
            rows.append(("  declined unanswerable (rate)", report.abstention_rate))
            rows.append(("  declined answerable (rate)", report.false_abstention_rate))
            rows += [(f"attribution {label}", count) for label, count in report.attribution.items()]
        s = report.settings
        settings = KeyValues(
            (("k", s["k"]), ("token budget", s["token_budget"]), ("tokenizer", s["tokenizer"]),
             ("chunking", s["chunking"]))
        )  # fmt: skip
        figures = Table((Column("figure"), Column("value", "number")), tuple(rows), cut=False)
        guide = Details(
            "how to read this",
            tuple(
                Paragraph(p) for p in (*READING_GUIDE, *(ANSWER_GUIDE if report.answers is not None else ()))
            ),
        )
        scored = s.get("scored_chunks")
        said = (Paragraph(str(scored["text"])),) if isinstance(scored, dict) and scored.get("text") else ()
        title = "Context and answers" if report.answers is not None else "Context quality"
        sections = (
            Section("context", title, (settings, *said, figures)),
            Section("worst-cases", "Worst cases", (_worst_items(report), guide)),
            isolation_section(report.isolation, report.leaks),
        )
        return Document(tuple(s for s in sections if s is not None))


def _worst_items(report: ContextReport) -> Items:
    if not report.worst:
        what = "answer went wrong" if report.answers is not None else "context misses evidence"
        return Items(f"worst cases: none (no {what})", ())
    what = "answers that went wrong" if report.answers is not None else "answerable cases missing evidence"
    return Items(
        f"worst cases ({len(report.worst)} of {report.failing} {what}; every case is in the report):",
        tuple((case_id, f"{verdict}: {why}") for case_id, verdict, why in report.worst),
        separator="  ",
    )


KIND = ContextKind()
