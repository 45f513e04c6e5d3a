"""Framework adapters: a LangChain, LlamaIndex or Haystack retriever as a ragaudit :class:`Retriever`.

One small module per framework, registered here by name and imported only when asked for (each
framework is an optional extra). ``--retriever langchain:my_app.rag:retriever`` names the adapter, then
the object (``module:attribute`` or ``./file.py:attribute``, as for a plain ``--retriever``). Each
adapter says in one place how the caller's tenant becomes the framework's filter; the tenant audit,
not the adapter, decides whether that filter held (docs/integrations.md).
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from ragaudit.errors import InputError
from ragaudit.retrieval.protocol import Retriever

ADAPTERS = {
    "langchain": "ragaudit.retrieval.adapters.langchain",
    "llamaindex": "ragaudit.retrieval.adapters.llamaindex",
    "haystack": "ragaudit.retrieval.adapters.haystack",
}
"""Adapter name -> module; each module has ``adapt(obj, *, tenant_key) -> Retriever``."""

DEFAULT_TENANT_KEY = "tenant_id"


def adapter_name(spec: str) -> str | None:
    """The adapter ``spec`` names (``langchain`` in ``langchain:my_app.rag:retriever``), else ``None``."""
    head, colon, rest = spec.strip().partition(":")
    return head if colon and head in ADAPTERS and ":" in rest else None


def load_adapter(spec: str, *, tenant_key: str = DEFAULT_TENANT_KEY, where: str | None = None) -> Retriever:
    """Import the object ``spec`` names (``NAME:module:attribute``) and wrap it in adapter ``NAME``.

    A function that takes no arguments is called first (a factory that builds the framework's object);
    the LlamaIndex adapter also takes a per-request factory ``(filters, top_k)`` as it is. ``where``
    names the retriever in the adapter's errors (default ``spec``; a pipeline file gives its path and line)."""
    from ragaudit.retrieval.plugin import load_attribute

    name = adapter_name(spec)
    if name is None:
        raise InputError(
            spec,
            None,
            f"expected ADAPTER:module:attribute with ADAPTER one of {', '.join(ADAPTERS)}",
            "e.g. langchain:my_app.rag:retriever",
        )
    target = spec.strip().partition(":")[2]
    obj = load_attribute(target)
    if _is_function(obj) and not _required_parameters(obj):
        try:
            obj = obj()
        except Exception as exc:
            raise InputError(
                spec,
                None,
                f"calling {target}() failed: {type(exc).__name__}: {exc}",
                "fix the factory",
            ) from None
    module = importlib.import_module(ADAPTERS[name])
    adapted: Retriever = module.adapt(obj, tenant_key=tenant_key, where=where or spec)
    return adapted


def _is_function(obj: Any) -> bool:
    """A plain or decorated (``functools.cache``) function, not a class or a framework object."""
    return inspect.isroutine(obj) or inspect.isroutine(getattr(obj, "__wrapped__", None))


def _required_parameters(function: Any) -> list[str]:
    parameters = inspect.signature(function).parameters.values()
    return [p.name for p in parameters if p.default is inspect.Parameter.empty and p.kind <= p.KEYWORD_ONLY]
