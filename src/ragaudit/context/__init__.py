"""Beyond ranking: the quality of the assembled context, the groundedness of answers, failure
attribution (retrieval vs generation) and abstention.

Deterministic first: values, units, dates and plan names are checked against the context without an
LLM; an LLM judge (:mod:`ragaudit.context.judge`) is an advisory extra. See ``docs/context.md``.

Modules: :mod:`~ragaudit.context.tokens` (token counts), :mod:`~ragaudit.context.assemble` (top-k after
dedupe and token budget), :mod:`~ragaudit.context.context_metrics`, :mod:`~ragaudit.context.claims`
(value and name extraction), :mod:`~ragaudit.context.groundedness`, :mod:`~ragaudit.context.attribution`,
:mod:`~ragaudit.context.abstention`, :mod:`~ragaudit.context.answers` (answers file and endpoint
answerer), :mod:`~ragaudit.context.sources` (pipeline / run / report), :mod:`~ragaudit.context.audit`
(the report).
"""

from ragaudit.context.abstention import auroc, best_threshold, is_decline
from ragaudit.context.assemble import AssembledContext, ChunkLookup, ContextChunk, assemble_context
from ragaudit.context.attribution import Attribution, Verdict, attribute
from ragaudit.context.claims import Value, extract_mentions, extract_values, harvest_plan_names
from ragaudit.context.context_metrics import ContextMetrics, context_metrics
from ragaudit.context.groundedness import Groundedness, GroundednessChecker
from ragaudit.context.tokens import TokenCounter, token_counter

__all__ = [
    "AssembledContext",
    "Attribution",
    "ChunkLookup",
    "ContextChunk",
    "ContextMetrics",
    "Groundedness",
    "GroundednessChecker",
    "TokenCounter",
    "Value",
    "Verdict",
    "assemble_context",
    "attribute",
    "auroc",
    "best_threshold",
    "context_metrics",
    "extract_mentions",
    "extract_values",
    "harvest_plan_names",
    "is_decline",
    "token_counter",
]
