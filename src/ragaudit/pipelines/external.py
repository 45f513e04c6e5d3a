"""A pipeline whose first stage is a retriever you built: a framework's, or any ``module:factory``.

::

    [retriever]
    type = "langchain"                 # or "llamaindex", "haystack"
    target = "my_app.rag:retriever"    # what --retriever langchain:my_app.rag:retriever names
    tenant_key = "customer_id"         # the metadata key of the tenant filter (--tenant-key); default tenant_id

    [retriever]
    type = "my_app.search:make_retriever"   # --retriever my_app.search:make_retriever
    index = "prod"                          # any other key: passed to make_retriever(index="prod")

The stage is built by the same code as ``--retriever`` (:func:`ragaudit.retrieval.adapters.load_adapter`,
:func:`ragaudit.retrieval.plugin.load_plugin`), so the two give the same retriever; the pipeline's rewrite
and rerank stages wrap it like any first stage. Such a retriever keeps its own index: ragaudit chunks
nothing (``[chunking]`` is refused) and decides who owns a returned chunk from the corpus, as for
``--retriever``. A bad target or a framework that is not installed is an error naming the pipeline file,
the line of the key and the fix (the pip command).
"""

from __future__ import annotations

from collections.abc import Mapping
from importlib import metadata
from typing import Any

from ragaudit.errors import InputError, MissingDependencyError
from ragaudit.retrieval.adapters import ADAPTERS, DEFAULT_TENANT_KEY
from ragaudit.retrieval.protocol import Retriever

FRAMEWORK_KEYS = {"target", "tenant_key"}
"""The keys of a ``langchain`` / ``llamaindex`` / ``haystack`` first stage (``target`` is required)."""
FRAMEWORK_PACKAGES = {
    "langchain": "langchain-core",
    "llamaindex": "llama-index-core",
    "haystack": "haystack-ai",
}
"""The distribution whose version a report records for each framework."""


def is_framework(stage_type: str) -> bool:
    """``langchain``, ``llamaindex`` or ``haystack``: a framework's retriever behind its adapter."""
    return stage_type in ADAPTERS


def is_external(stage_type: str) -> bool:
    """A first stage ragaudit does not build an index for: a framework's retriever, or ``module:factory``."""
    return is_framework(stage_type) or ":" in stage_type


def retriever_spec(stage_type: str, params: Mapping[str, Any]) -> str:
    """The ``--retriever`` value that names the same retriever (``langchain:my_app.rag:retriever``)."""
    return f"{stage_type}:{params.get('target')}" if is_framework(stage_type) else stage_type


def build_external(stage_type: str, params: Mapping[str, Any], origin: tuple[str, int | None]) -> Retriever:
    """The retriever of an external first stage, loaded as ``--retriever`` loads it; ``origin`` is the
    pipeline file and the line of its ``target`` (or ``type``) key, named in every error."""
    from ragaudit.retrieval.adapters import load_adapter
    from ragaudit.retrieval.plugin import load_plugin

    path, line = origin
    spec = retriever_spec(stage_type, params)
    key = "target" if is_framework(stage_type) else "type"
    try:
        if is_framework(stage_type):
            tenant_key = str(params.get("tenant_key", DEFAULT_TENANT_KEY))
            return load_adapter(spec, tenant_key=tenant_key, where=f"{path}:{line}" if line else path)
        return load_plugin(stage_type, **dict(params))
    except MissingDependencyError as exc:
        raise InputError(
            path,
            line,
            f"[retriever] type = {stage_type!r} needs {exc.package}, which is not installed",
            f"pip install 'ragaudit[{exc.extra}]'",
        ) from None
    except InputError as exc:
        raise InputError(
            path,
            line,
            f"[retriever] {key} = {params.get(key, stage_type)!r}: {exc.problem.message}",
            exc.problem.fix,
        ) from None


def external_model(stage_type: str, params: Mapping[str, Any]) -> str:
    """What a report records of the retriever: ``langchain-core 0.3.76: my_app.rag:retriever``."""
    target = retriever_spec(stage_type, params)
    package = FRAMEWORK_PACKAGES.get(stage_type)
    if package is None:
        return target
    try:
        return f"{package} {metadata.version(package)}: {params.get('target')}"
    except metadata.PackageNotFoundError:  # pragma: no cover - the build failed before this is asked
        return target
