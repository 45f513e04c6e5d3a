"""What the framework adapters share: the framework import that names its extra, and one framework
document as a :class:`~ragaudit.retrieval.protocol.RetrievedChunk` with nothing dropped."""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from ragaudit.errors import MissingDependencyError
from ragaudit.retrieval.protocol import RetrievedChunk


def require(module: str, package: str, extra: str) -> ModuleType:
    """Import ``module`` or raise :class:`MissingDependencyError` naming ``pip install 'ragaudit[extra]'``."""
    try:
        return importlib.import_module(module)
    except ImportError:
        raise MissingDependencyError(package, extra) from None


def position_score(position: int) -> float:
    """The score of a result that came without one: ``1 / (1 + position)``, so the order is the ranking."""
    return 1.0 / (1 + position)


def to_chunk(
    chunk_id: str,
    content: str,
    metadata: Mapping[str, Any] | None,
    score: float,
    *,
    tenant_key: str,
    extra: Mapping[str, Any] | None = None,
) -> RetrievedChunk:
    """One result: its id, text, every metadata field, its score; ``source_id`` is the metadata's
    ``source_id`` or ``doc_id`` (else the chunk id) and ``tenant_id`` the owner the metadata claims under
    ``tenant_key`` (the audit checks it against the corpus; it is never trusted)."""
    meta = dict(metadata or {})
    source = meta.get("source_id") or meta.get("doc_id") or chunk_id
    chunk: RetrievedChunk = {
        "chunk_id": chunk_id,
        "score": float(score),
        "content": content,
        "source_id": str(source),
        "metadata": meta,
    }
    owner = meta.get(tenant_key)
    if isinstance(owner, str):
        chunk["tenant_id"] = owner
    if extra:
        chunk["extra"] = dict(extra)
    return chunk
