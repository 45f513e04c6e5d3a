"""Rerank and rewrite stages of a pipeline, through one registry: ours and a user's plug in the same way.

A stage type is a factory called with the stage's TOML keys as keyword arguments (plus ``retriever=``,
the pipeline's retriever before the stage, when the factory takes a ``retriever`` parameter). It returns
a :class:`~ragaudit.retrieval.rerank.Reranker` (``name`` and ``async score(query, texts)``) or a
:class:`~ragaudit.retrieval.rewrite.QueryRewriter` (``name`` and ``async rewrite(query, *, tenant_id)``).
``[rerank] top_n`` (default 50, or the reranker's ``default_top_n`` when it has one) belongs to the stage,
not the factory. A type is found, in order:

1. registered in this process with :func:`register_stage`;
2. a built-in (:data:`BUILTIN_STAGES`: ``rerank.learned``, ``rerank.bi-encoder``, ``rerank.cross-encoder``, ``rerank.llm``,
   ``rewrite.synonyms``, ``rewrite.rm3``, ``rewrite.llm``), each a ``module:factory`` string;
3. an entry point of the group ``ragaudit.stages`` named ``<role>.<type>`` (``rerank.my-reranker``),
   whose value is a ``module:factory`` string, loaded exactly like the built-ins;
4. the type itself written as ``module:factory`` (``type = "mypkg.stages:MyReranker"``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any, Literal

from ragaudit.errors import InputError
from ragaudit.pipelines.config import StageConfig, thawed
from ragaudit.retrieval.protocol import Retriever

Role = Literal["rerank", "rewrite"]
ENTRY_POINT_GROUP = "ragaudit.stages"
BUILTIN_STAGES: dict[str, str] = {
    "rerank.learned": "ragaudit.retrieval.learned_fusion:learned_stage",
    "rerank.bi-encoder": "ragaudit.retrieval.rerankers:bi_encoder_stage",
    "rerank.cross-encoder": "ragaudit.retrieval.rerankers:cross_encoder_stage",
    "rerank.llm": "ragaudit.retrieval.rerankers:llm_stage",
    "rewrite.synonyms": "ragaudit.retrieval.rewriters:synonyms_stage",
    "rewrite.rm3": "ragaudit.retrieval.rewriters:rm3_stage",
    "rewrite.llm": "ragaudit.retrieval.rewriters:llm_stage",
}
"""The built-in stage types, as ``<role>.<type>`` -> ``module:factory`` (the shape of an entry point)."""
_REGISTERED: dict[str, Callable[..., Any]] = {}
_STAGE_KEYS = {"rerank": {"top_n"}, "rewrite": set()}


def register_stage(role: Role, name: str, factory: Callable[..., Any]) -> None:
    """Make ``[role] type = name`` build with ``factory`` (replaces a built-in or entry point of that name)."""
    _REGISTERED[f"{role}.{name}"] = factory


def _entry_points() -> dict[str, str]:
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


def stage_names(role: Role) -> list[str]:
    """Every stage type of ``role`` known by name: registered, built-in and from entry points."""
    prefix = f"{role}."
    names = [*_REGISTERED, *BUILTIN_STAGES, *_entry_points()]
    return sorted({n[len(prefix) :] for n in names if n.startswith(prefix)})


def is_stage(role: Role, name: str) -> bool:
    """Whether ``name`` is a known stage type of ``role`` or a ``module:factory`` reference."""
    return ":" in name or name in stage_names(role)


def stage_factory(role: Role, name: str) -> Callable[..., Any]:
    """The factory of stage type ``name`` (lookup order in the module docstring)."""
    from ragaudit.retrieval.plugin import load_attribute

    key = f"{role}.{name}"
    if key in _REGISTERED:
        return _REGISTERED[key]
    spec = BUILTIN_STAGES.get(key) or _entry_points().get(key) or (name if ":" in name else None)
    if spec is None:
        raise InputError(
            f"[{role}]",
            None,
            f"unknown stage type {name!r}",
            f"use one of: {', '.join(stage_names(role))}, or module:factory",
        )
    factory = load_attribute(spec)
    if not callable(factory):
        raise InputError(f"[{role}]", None, f"{spec!r} is not callable", "name a class or a function")
    return factory  # type: ignore[no-any-return]


def build_stage(role: Role, stage: StageConfig, retriever: Retriever) -> Any:
    """The reranker or rewriter of ``stage``, checked against the role's protocol."""
    from ragaudit.retrieval.rerank import Reranker
    from ragaudit.retrieval.rewrite import QueryRewriter

    factory = stage_factory(role, stage.type)
    kwargs: dict[str, Any] = {k: v for k, v in thawed(stage.params).items() if k not in _STAGE_KEYS[role]}
    try:
        accepts = set(inspect.signature(factory).parameters)
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        accepts = set()
    if "retriever" in accepts:
        kwargs["retriever"] = retriever
    try:
        made = factory(**kwargs)
    except (InputError, ImportError):
        raise
    except TypeError as exc:
        raise InputError(
            f"[{role}]", None, f"type {stage.type!r} cannot take these keys: {exc}", "check the stage's keys"
        ) from None
    expected = Reranker if role == "rerank" else QueryRewriter
    if not isinstance(made, expected):
        need = "async score(query, texts)" if role == "rerank" else "async rewrite(query, *, tenant_id)"
        raise InputError(
            f"[{role}]",
            None,
            f"type {stage.type!r} made a {type(made).__name__}",
            f"return an object with name and {need}",
        )
    return made


def wrap_rerank(base: Retriever, stage: StageConfig) -> tuple[Retriever, str]:
    """``base`` wrapped in a rerank stage; returns the retriever and the reranker's name."""
    from ragaudit.retrieval.rerank import RerankRetriever

    reranker = build_stage("rerank", stage, base)
    default = getattr(reranker, "default_top_n", 50)  # a fitted stage knows how many it was fitted on
    return RerankRetriever(base, reranker, int(stage.params.get("top_n", default))), str(reranker.name)


def wrap_rewrite(base: Retriever, stage: StageConfig) -> tuple[Retriever, str]:
    """``base`` wrapped in a query-rewrite stage; returns the retriever and the rewriter's name."""
    from ragaudit.retrieval.rewrite import RewriteRetriever

    rewriter = build_stage("rewrite", stage, base)
    return RewriteRetriever(base, rewriter), str(rewriter.name)
