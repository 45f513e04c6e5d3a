"""The retriever contract (from the lesson this project implements).

Everything that retrieves implements :class:`Retriever`: the built-in pipelines, the HTTP adapter,
the run-file replayer and user plugins (``module:factory``). The list order is the ranking.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any, Protocol, TypedDict, cast, runtime_checkable

from ragaudit.corpus.model import Chunk
from ragaudit.errors import InputError


class _RequiredChunk(TypedDict):
    chunk_id: str
    score: float
    content: str
    source_id: str


class RetrievedChunk(_RequiredChunk, total=False):
    """One retrieved chunk. ``tenant_id`` is the owner the retriever claims; ``metadata`` is free-form;
    ``extra`` holds any other field the service returned (``title``, ``snippet``, ``highlight``, ...),
    which the tenant checks attribute like the rest (a Python retriever may also return such fields
    at the top level of its dicts)."""

    tenant_id: str
    metadata: Mapping[str, Any]
    extra: Mapping[str, Any]


class RetrievedList(list[RetrievedChunk]):
    """A ranking that also carries the whole response it came from, so the tenant checks can read every
    value of it, not only the chunk list: ``response`` is the parsed body (an HTTP service's JSON:
    ``debug``, ``facets``, ``suggest`` beside the results) and ``items_path`` the JSON path of the chunk
    list inside it (``$.results``; ``$`` for a body that is the list), ``headers`` the response headers.
    A plain ``list`` works wherever this does."""

    def __init__(
        self,
        chunks: list[RetrievedChunk],
        response: Any = None,
        items_path: str = "$",
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(chunks)
        self.response = response
        self.items_path = items_path
        self.headers = dict(headers or {})
        """The response's headers (an HTTP service's: a debug header can carry data too)."""


def chunk_result(chunk: Chunk, score: float) -> RetrievedChunk:
    """The protocol's result for one indexed chunk, as every built-in retriever shapes it: the chunk text
    as content, the document's ``source_id`` (else its id), the owner's tenant, and the chunk's metadata
    plus ``doc_id`` / ``start`` / ``end`` (and ``title``)."""
    metadata: dict[str, Any] = dict(chunk.metadata)
    metadata.update(doc_id=chunk.doc_id, start=chunk.start, end=chunk.end)
    if chunk.title:
        metadata.setdefault("title", chunk.title)
    source = chunk.metadata.get("source_id")
    return {
        "chunk_id": chunk.chunk_id,
        "score": score,
        "content": chunk.text,
        "source_id": source if isinstance(source, str) and source else chunk.doc_id,
        "tenant_id": chunk.tenant_id,
        "metadata": metadata,
    }


@runtime_checkable
class Retriever(Protocol):
    """Anything with ``async search(*, tenant_id, query, top_k) -> list[RetrievedChunk]``."""

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        """Query the index with strictly enforced tenant filtering."""
        ...


SEARCH_KEYWORDS = ("tenant_id", "query", "top_k")
SEARCH_FIX = (
    "give it async def search(self, *, tenant_id, query, top_k) returning a list of chunks with a chunk_id"
)


def check_retriever(obj: object, where: str = "retriever") -> Retriever:
    """``obj`` as a :class:`Retriever`, or an :class:`InputError` (at ``where``: the ``--retriever`` spec,
    or ``retriever`` from Python) saying what is wrong before anything runs: a class instead of an
    instance, no ``search`` (with a word for LangChain's ``invoke``), a synchronous ``search``, or one
    that does not take the keywords ``tenant_id``, ``query`` and ``top_k``. The CLI and the Python API
    say the same words."""
    name = type(obj).__name__
    if inspect.isclass(obj):
        raise InputError(
            where,
            None,
            f"{obj.__name__} is a class, not a retriever",
            f"pass an instance: {obj.__name__}(...)",
        )
    search = getattr(obj, "search", None)
    if not callable(search):
        if callable(getattr(obj, "invoke", None)) or callable(getattr(obj, "ainvoke", None)):
            raise InputError(
                where,
                None,
                f"got a {name} object with invoke() but no search method (a LangChain retriever?)",
                "wrap it in the adapter that sends the tenant filter: LangChainRetriever(retriever) from "
                "ragaudit.retrieval.adapters.langchain, or --retriever langchain:module:attribute on the "
                "command line (docs/integrations.md)",
            )
        raise InputError(where, None, f"got a {name} object without a search method", SEARCH_FIX)
    if not inspect.iscoroutinefunction(search):
        raise InputError(where, None, f"{name}.search is not async", SEARCH_FIX)
    missing = _missing_keywords(search)
    if missing:
        raise InputError(
            where,
            None,
            f"{name}.search does not take the keyword(s) {', '.join(missing)} (it takes: "
            f"{_parameters(search)}); ragaudit calls search(tenant_id=..., query=..., top_k=...)",
            SEARCH_FIX,
        )
    return cast(Retriever, obj)


def _missing_keywords(search: Any) -> list[str]:
    try:
        parameters = inspect.signature(search).parameters
    except (TypeError, ValueError):  # no signature to read (a C callable): it will be called and judged
        return []
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()):
        return []
    by_keyword = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    accepted = {n for n, p in parameters.items() if p.kind in by_keyword}
    return [k for k in SEARCH_KEYWORDS if k not in accepted]


def _parameters(search: Any) -> str:
    try:
        return ", ".join(inspect.signature(search).parameters) or "nothing"
    except (TypeError, ValueError):
        return "unknown"
