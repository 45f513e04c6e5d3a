"""ragaudit: audit the retrieval half of RAG systems.

The public API is imported lazily so ``import ragaudit`` stays fast::

    import ragaudit
    result = ragaudit.evaluate("golden.jsonl", "run.trec", metrics="nDCG@10,R@5")
    print(result.metrics["nDCG@10"])
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from ragaudit.version import __version__

_EXPORTS = {
    "evaluate": "ragaudit.api.calls",
    "evaluate_retriever": "ragaudit.api.calls",
    "pipeline": "ragaudit.api.calls",
    "compare": "ragaudit.api.calls",
    "bench": "ragaudit.api.calls",
    "audit_tenants": "ragaudit.api.calls",
    "gate": "ragaudit.api.calls",
    "Pipeline": "ragaudit.api.calls",
    "Evaluation": "ragaudit.api.results",
    "CompareResult": "ragaudit.api.results",
    "BenchResult": "ragaudit.api.results",
    "AuditResult": "ragaudit.api.results",
    "GateVerdict": "ragaudit.api.results",
    "EvalResult": "ragaudit.evaluation.result",
    "CaseResult": "ragaudit.evaluation.result",
    "Policy": "ragaudit.metrics.policy",
    "MetricSpec": "ragaudit.metrics.names",
    "parse_metric": "ragaudit.metrics.names",
    "parse_metrics": "ragaudit.metrics.names",
    "Dataset": "ragaudit.data.schema",
    "GoldenCase": "ragaudit.data.schema",
    "Evidence": "ragaudit.data.schema",
    "load_dataset": "ragaudit.data.loading",
    "load_run": "ragaudit.data.loading",
    "Run": "ragaudit.data.run",
    "Retriever": "ragaudit.retrieval.protocol",
    "RetrievedChunk": "ragaudit.retrieval.protocol",
    "BadAction": "ragaudit.errors",
    "ChatError": "ragaudit.errors",
    "ChatRequestError": "ragaudit.errors",
    "ChatUnavailableError": "ragaudit.errors",
    "ChunkerError": "ragaudit.errors",
    "InputError": "ragaudit.errors",
    "MetricNameError": "ragaudit.errors",
    "MissingDependencyError": "ragaudit.errors",
    "PermanentRetrievalError": "ragaudit.errors",
    "Problem": "ragaudit.errors",
    "RagauditError": "ragaudit.errors",
    "ReportFieldError": "ragaudit.errors",
    "RetrievalError": "ragaudit.errors",
    "RunFailedError": "ragaudit.errors",
    "TenantError": "ragaudit.errors",
    "TransientRetrievalError": "ragaudit.errors",
    "ValidationError": "ragaudit.errors",
}

__all__ = [
    "AuditResult",
    "BadAction",
    "BenchResult",
    "CaseResult",
    "ChatError",
    "ChatRequestError",
    "ChatUnavailableError",
    "ChunkerError",
    "CompareResult",
    "Dataset",
    "EvalResult",
    "Evaluation",
    "Evidence",
    "GateVerdict",
    "GoldenCase",
    "InputError",
    "MetricNameError",
    "MetricSpec",
    "MissingDependencyError",
    "PermanentRetrievalError",
    "Pipeline",
    "Policy",
    "Problem",
    "RagauditError",
    "ReportFieldError",
    "RetrievalError",
    "RetrievedChunk",
    "Retriever",
    "Run",
    "RunFailedError",
    "TenantError",
    "TransientRetrievalError",
    "ValidationError",
    "__version__",
    "audit_tenants",
    "bench",
    "compare",
    "evaluate",
    "evaluate_retriever",
    "gate",
    "load_dataset",
    "load_run",
    "parse_metric",
    "parse_metrics",
    "pipeline",
]

if TYPE_CHECKING:
    from ragaudit.api.calls import (
        Pipeline,
        audit_tenants,
        bench,
        compare,
        evaluate,
        evaluate_retriever,
        gate,
        pipeline,
    )
    from ragaudit.api.results import AuditResult, BenchResult, CompareResult, Evaluation, GateVerdict
    from ragaudit.data.loading import load_dataset, load_run
    from ragaudit.data.run import Run
    from ragaudit.data.schema import Dataset, Evidence, GoldenCase
    from ragaudit.errors import (
        BadAction,
        ChatError,
        ChatRequestError,
        ChatUnavailableError,
        ChunkerError,
        InputError,
        MetricNameError,
        MissingDependencyError,
        PermanentRetrievalError,
        Problem,
        RagauditError,
        ReportFieldError,
        RetrievalError,
        RunFailedError,
        TenantError,
        TransientRetrievalError,
        ValidationError,
    )
    from ragaudit.evaluation.result import CaseResult, EvalResult
    from ragaudit.metrics.names import MetricSpec, parse_metric, parse_metrics
    from ragaudit.metrics.policy import Policy
    from ragaudit.retrieval.protocol import RetrievedChunk, Retriever


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'ragaudit' has no attribute {name!r}")
    return getattr(import_module(module), name)
