"""Documents and chunks.

A :class:`Document` is what a user's corpus holds; a :class:`Chunk` is what an index holds. Every chunk
keeps ``(doc_id, start, end)`` character offsets into its document's ``text``, so span labels
(``evidence``) project onto any chunking. Chunk ids are deterministic: ``{doc_id}#{n}`` for the
n-th chunk (0-based) of a chunker, or the document id itself when a document is indexed whole.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any


@dataclass(frozen=True)
class Document:
    """One source document, owned by exactly one tenant.

    ``metadata`` carries ``version``, ``status`` (``active`` | ``superseded``), ``source_id``,
    ``effective_date`` and anything else the user keeps.
    """

    doc_id: str
    tenant_id: str
    text: str
    title: str = ""
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def status(self) -> str:
        value = self.metadata.get("status", "active")
        return value if isinstance(value, str) else "active"

    @property
    def source_id(self) -> str:
        value = self.metadata.get("source_id", self.doc_id)
        return value if isinstance(value, str) else self.doc_id


@dataclass(frozen=True)
class Chunk:
    """A piece of one document: ``document.text[start:end]``, with the owner copied from the document."""

    chunk_id: str
    doc_id: str
    tenant_id: str
    start: int
    end: int
    text: str
    title: str = ""
    metadata: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def index_text(self) -> str:
        """What retrievers index: the title (if any) followed by the chunk text."""
        return f"{self.title}\n{self.text}" if self.title else self.text


def whole_document_chunk(doc: Document) -> Chunk:
    """Index a document whole: one chunk whose id is the document id."""
    return Chunk(doc.doc_id, doc.doc_id, doc.tenant_id, 0, len(doc.text), doc.text, doc.title, doc.metadata)
