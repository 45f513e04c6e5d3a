"""The ``context`` (ragaudit context) report kind, and the terminal figures it shares with ``check-answers``."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragaudit.artifacts.tables import fmt_number, render_table
from ragaudit.report.kinds.base import ReportKind
from ragaudit.report.kinds.fields import Fields

QUALITY_FIGURES = (
    "precision_chunks",
    "precision_tokens",
    "evidence_coverage",
    "evidence_present_rate",
    "redundancy",
    "staleness",
    "tokens_mean",
)
ANSWER_FIGURES = ("checked", "grounded", "ungrounded", "declined", "correct", "incorrect", "no_answer")


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
        return ContextReport(
            _figures(quality.obj("settings", required=False), ("k", "token_budget", "tokenizer", "chunking")),
            _figures(quality.obj("summary", required=False), QUALITY_FIGURES),
            retrieval.opt("auroc"),
            _figures(best, ("threshold", "accuracy", "answerable_coverage")) if best.data else None,
            _figures(grounded, ANSWER_FIGURES) if grounded.data else None,
            generated.opt("abstention_rate"),
            generated.opt("false_abstention_rate"),
            dict(report.obj("attribution", required=False).obj("counts", required=False).data),
        )

    def terminal(self, report: ContextReport, limit: int = 10) -> list[str]:
        """The figures a terminal user wants first: context quality, abstention, groundedness, attribution."""
        rows = [[f"context {key}", fmt_number(report.quality[key])] for key in QUALITY_FIGURES]
        rows.append(["abstention AUROC (top score)", fmt_number(report.auroc)])
        best = report.best_threshold
        if best is not None:
            rows.append(["  best threshold", fmt_number(best["threshold"])])
            rows.append(["  abstention accuracy", fmt_number(best["accuracy"])])
            rows.append(["  answerable coverage", fmt_number(best["answerable_coverage"])])
        if report.answers is not None:
            rows += [[f"answers {key}", fmt_number(report.answers[key])] for key in ANSWER_FIGURES]
            rows.append(["  declined unanswerable (rate)", fmt_number(report.abstention_rate)])
            rows.append(["  declined answerable (rate)", fmt_number(report.false_abstention_rate)])
            rows += [
                [f"attribution {label}", fmt_number(count)] for label, count in report.attribution.items()
            ]
        s = report.settings
        head = f"k={s['k']}, token budget={s['token_budget']}, tokenizer={s['tokenizer']}, chunking={s['chunking']}"
        return [head, render_table(["figure", "value"], rows)]


KIND = ContextKind()
