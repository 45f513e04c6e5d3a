"""The ``context`` (ragaudit context) report kind, and the terminal figures it shares with ``check-answers``."""

from __future__ import annotations

from collections.abc import Mapping
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
    without answers has no ``groundedness``); a figure that is missing prints as ``-``."""

    settings: Mapping[str, Any]
    """``k``, ``token_budget``, ``tokenizer`` and ``chunking`` of the context quality checks."""
    quality: Mapping[str, Any]
    retrieval_abstention: Mapping[str, Any]
    best_threshold: Mapping[str, Any]
    groundedness: Mapping[str, Any] | None
    generated_abstention: Mapping[str, Any]
    attribution: Mapping[str, Any]


class ContextKind(ReportKind):
    name = "context"
    required = ()

    def typed(self, report: Fields) -> ContextReport:
        quality, abstention = (
            report.obj("context_quality", required=False),
            report.obj("abstention", required=False),
        )
        retrieval = abstention.obj("retrieval", required=False)
        grounded = report.opt("groundedness")
        return ContextReport(
            quality.obj("settings", required=False).data,
            quality.obj("summary", required=False).data,
            retrieval.data,
            retrieval.obj("best_threshold", required=False).data,
            grounded if isinstance(grounded, Mapping) and grounded else None,
            abstention.obj("generated", required=False).data,
            report.obj("attribution", required=False).obj("counts", required=False).data,
        )

    def terminal(self, report: ContextReport, limit: int = 10) -> list[str]:
        """The figures a terminal user wants first: context quality, abstention, groundedness, attribution."""
        rows = [[f"context {key}", fmt_number(report.quality.get(key))] for key in QUALITY_FIGURES]
        rows.append(["abstention AUROC (top score)", fmt_number(report.retrieval_abstention.get("auroc"))])
        best = report.best_threshold
        if best:
            rows.append(["  best threshold", fmt_number(best.get("threshold"))])
            rows.append(["  abstention accuracy", fmt_number(best.get("accuracy"))])
            rows.append(["  answerable coverage", fmt_number(best.get("answerable_coverage"))])
        if report.groundedness is not None:
            rows += [[f"answers {key}", fmt_number(report.groundedness.get(key))] for key in ANSWER_FIGURES]
            generated = report.generated_abstention
            rows.append(["  declined unanswerable (rate)", fmt_number(generated.get("abstention_rate"))])
            rows.append(["  declined answerable (rate)", fmt_number(generated.get("false_abstention_rate"))])
            rows += [
                [f"attribution {label}", fmt_number(count)] for label, count in report.attribution.items()
            ]
        s = report.settings
        head = (
            f"k={s.get('k')}, token budget={s.get('token_budget')}, "
            f"tokenizer={s.get('tokenizer')}, chunking={s.get('chunking')}"
        )
        return [head, render_table(["figure", "value"], rows)]


KIND = ContextKind()
