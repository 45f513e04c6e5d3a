"""The public API of ``import ragaudit`` is pinned: a name added or removed is a decision, made here."""

from __future__ import annotations

import subprocess
import sys

import pytest

import ragaudit
import ragaudit.errors

PUBLIC = [
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


def test_all_is_pinned() -> None:
    assert ragaudit.__all__ == PUBLIC


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_resolves(name: str) -> None:
    assert getattr(ragaudit, name) is not None


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = ragaudit.nope  # type: ignore[attr-defined]


def test_every_exception_ragaudit_raises_on_purpose_is_one_tree_in_errors() -> None:
    """The whole exception tree lives in ragaudit.errors and is exported from ragaudit."""
    tree = {
        name
        for name, value in vars(ragaudit.errors).items()
        if isinstance(value, type) and issubclass(value, ragaudit.errors.RagauditError)
    }
    assert tree <= set(PUBLIC)
    assert issubclass(ragaudit.ChatUnavailableError, ragaudit.TransientRetrievalError)
    assert issubclass(ragaudit.ChatRequestError, ragaudit.PermanentRetrievalError)
    assert issubclass(ragaudit.ReportFieldError, ragaudit.InputError)


def test_import_stays_light() -> None:
    """``import ragaudit`` loads no heavy dependency and none of the floors above the ground."""
    code = (
        "import sys, ragaudit; heavy = [m for m in ('numpy', 'bm25s', 'onnxruntime', 'torch', 'httpx', "
        "'ragaudit.evaluation', 'ragaudit.cli') if m in sys.modules]; print(heavy)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
