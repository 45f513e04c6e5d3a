"""What ``ragaudit serve`` searches: a pipeline built in process over the corpus's active documents.

The pipeline is any ``--pipeline`` the other commands take (a preset: ``bm25``, ``dense``, ``hybrid``,
``hybrid-rerank:MODEL.json``; or a TOML file, e.g. a dense stage on an on-disk Qdrant collection),
built by :func:`ragaudit.pipelines.build.build_pipeline`, so it ranks exactly as ``ragaudit eval
--pipeline`` does over the same documents. Its indexes filter by tenant inside the engine
(``retrieval/tenancy.py``; Qdrant: an ``is_tenant`` keyword payload index and a ``must`` filter).

Versions: documents whose metadata says ``status: "superseded"`` are left out of the index unless
``serve_superseded`` (so they cannot be served at all, not merely ranked lower). The served corpus's
``sha256`` is then the file's hash with ``:active`` appended, so a Qdrant collection or cached
chunking of the whole file is never reused for the active subset.

``min_score``: chunks scoring below it are dropped after ranking (the seed's candidate threshold; the
scale is the pipeline's own: BM25 scores, cosine similarities, fused scores).

``index_dir``: the first stage is loaded from there when it was saved for the same inputs, else built,
saved and switched in atomically (:mod:`ragaudit.serving.persisted`); ``None`` builds it in memory.
Either way the pipeline is assembled by :func:`ragaudit.pipelines.build.build_pipeline`, as ``eval
--pipeline`` assembles it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.errors import InputError
from ragaudit.pipelines.build import build_pipeline
from ragaudit.pipelines.config import resolve_pipeline
from ragaudit.retrieval.protocol import RetrievedChunk, Retriever

SUPERSEDED = "superseded"


def active_corpus(corpus: Corpus) -> Corpus:
    """``corpus`` without its superseded documents (the same object when it has none)."""
    active = tuple(d for d in corpus.documents if d.status != SUPERSEDED)
    if len(active) == len(corpus.documents):
        return corpus
    digest = hashlib.sha256(f"{corpus.sha256}:active".encode()).hexdigest()
    return Corpus(active, corpus.path, digest, corpus.format, corpus.warnings)


@dataclass
class ServeEngine:
    """A built retriever and what it serves."""

    retriever: Retriever
    name: str
    corpus: Corpus
    documents_left_out: int
    min_score: float | None = None
    info: dict[str, Any] = field(default_factory=dict)

    async def search(self, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        found = await self.retriever.search(tenant_id=tenant_id, query=query, top_k=top_k)
        if self.min_score is None:
            return list(found)
        return [c for c in found if c.get("score", 0.0) >= self.min_score]


def build_engine(
    pipeline: str,
    corpus_path: str,
    *,
    serve_superseded: bool = False,
    min_score: float | None = None,
    qdrant_url: str | None = None,
    index_dir: Path | None = None,
    say: Callable[[str], None] = lambda line: None,
) -> ServeEngine:
    """Load the corpus, drop superseded documents (unless asked not to), build ``pipeline`` over it
    (its first stage loaded from ``index_dir`` when saved there for the same inputs; ``say`` gets the
    ``index: ...`` lines)."""
    whole = load_corpus(corpus_path)
    served = whole if serve_superseded else active_corpus(whole)
    if not served.documents:
        raise InputError(
            corpus_path,
            None,
            "no active document to serve (every document is superseded)",
            "mark current versions status: active, or pass --serve-superseded",
        )
    left_out = len(whole.documents) - len(served.documents)
    config = resolve_pipeline(pipeline)
    persisted = None
    if index_dir is not None:
        from ragaudit.serving.persisted import PersistedFirstStage

        persisted = PersistedFirstStage(index_dir, served, config.chunking, qdrant_url, say)
    built = build_pipeline(config, served, qdrant_url=qdrant_url, first_stage=persisted)
    retriever, label, chunks = built.retriever, config.name, len(built.chunks)
    index: dict[str, Any] = {}
    if persisted is not None:
        index = {
            "index": persisted.outcome,
            **({"index_path": str(persisted.path)} if persisted.path else {}),
        }
    info = {
        "pipeline": label,
        "documents": len(served.documents),
        "superseded_left_out": left_out,
        "chunks": chunks,
        "tenants": len(served.tenants),
        **index,
        **({"min_score": min_score} if min_score is not None else {}),
    }
    return ServeEngine(retriever, label, served, left_out, min_score, info)
