"""The plugin's fixtures, each built once per session for each distinct configuration: ``ragaudit_settings``,
``golden_dataset``, ``retriever``, ``eval_result`` and ``tenant_audit``. A ragaudit input error while
building one fails the test's setup with a short message instead of a traceback."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

import pytest

from ragaudit.pytest_plugin.runs import audit_once, evaluate_once
from ragaudit.pytest_plugin.session import Session, session_of
from ragaudit.pytest_plugin.settings import Settings, resolve_settings, usage
from ragaudit.pytest_plugin.sources import load_golden, session_retriever

if TYPE_CHECKING:
    from ragaudit.data.schema import Dataset
    from ragaudit.evaluation.result import EvalResult
    from ragaudit.retrieval.protocol import Retriever
    from ragaudit.security.tenant_audit import TenantAudit

T = TypeVar("T")


def _built(request: pytest.FixtureRequest, settings: Settings, build: Callable[[Session, Settings], T]) -> T:
    """``build`` on this session's state; a ragaudit input error becomes a short setup failure instead
    of a traceback."""
    from ragaudit.errors import RagauditError, ValidationError

    try:
        return build(session_of(request.config), settings)
    except ValidationError as exc:
        usage("; ".join(str(p) for p in exc.problems[:5]))
    except RagauditError as exc:
        usage(str(exc))


@pytest.fixture
def ragaudit_settings(request: pytest.FixtureRequest) -> Settings:
    """The configuration this test's ragaudit fixtures use."""
    return resolve_settings(request)


@pytest.fixture
def golden_dataset(request: pytest.FixtureRequest, ragaudit_settings: Settings) -> Dataset:
    """The configured golden dataset (loaded once per session)."""
    return _built(request, ragaudit_settings, load_golden)


@pytest.fixture
def retriever(request: pytest.FixtureRequest, ragaudit_settings: Settings) -> Retriever:
    """The configured retriever: a built-in pipeline over the corpus, or your ``module:factory``."""
    return _built(request, ragaudit_settings, session_retriever)


@pytest.fixture
def eval_result(request: pytest.FixtureRequest, ragaudit_settings: Settings) -> EvalResult:
    """Every golden case run through the retriever and scored (once per session and configuration)."""
    return _built(request, ragaudit_settings, evaluate_once)


@pytest.fixture
def tenant_audit(request: pytest.FixtureRequest, ragaudit_settings: Settings) -> TenantAudit:
    """The full tenant audit of the retriever over the corpus (once per session and configuration)."""
    return _built(request, ragaudit_settings, audit_once)
