"""Build a retrieval pipeline from its configuration over a chunked corpus.

Stages nest: ``rerank(rewrite(first_stage))`` — the rewriter changes the query the first stage sees
(RM3 takes its feedback from the first stage), and the reranker reorders the candidates against the
user's original query. Every stage passes the caller's tenant
through unchanged; the indexes enforce it.

Built components are shared through a :class:`ComponentCache`, so a benchmark of ``bm25``, ``dense``
and ``hybrid`` over one corpus indexes BM25 once and embeds the corpus once.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ragaudit.corpus.chunkers import chunk_corpus, make_chunker
from ragaudit.corpus.loading import Corpus
from ragaudit.corpus.model import Chunk
from ragaudit.pipelines.config import PipelineConfig, StageConfig
from ragaudit.retrieval.protocol import Retriever

if TYPE_CHECKING:
    from ragaudit.retrieval.dense import StoreKind
    from ragaudit.retrieval.embedding_types import TextEncoder


@dataclass
class ComponentCache:
    """Built chunkings and first-stage retrievers (with their build seconds), keyed by their configuration."""

    chunks: dict[str, list[Chunk]] = field(default_factory=dict)
    retrievers: dict[str, tuple[Retriever, float]] = field(default_factory=dict)


def embedding_counts(retriever: object) -> dict[str, int] | None:
    """``{"cached": n, "computed": m}``: the corpus texts a first stage's embedding cache served and
    the model embedded while it was built (summed over a hybrid's parts); None without a dense part.
    Build time depends on it: a warm cache builds in a fraction of a cold one's time."""
    parts = getattr(retriever, "retrievers", None)
    if isinstance(parts, tuple):
        counts = [c for part in parts if (c := embedding_counts(part)) is not None]
        if not counts:
            return None
        return {key: sum(c[key] for c in counts) for key in ("cached", "computed")}
    info = getattr(retriever, "info", None)
    cache = info().get("cache") if callable(info) else None
    if not isinstance(cache, Mapping):
        return None
    return {"cached": int(cache.get("hits", 0)), "computed": int(cache.get("misses", 0))}


@dataclass
class BuiltPipeline:
    """A ready-to-query pipeline and what went into it."""

    config: PipelineConfig
    retriever: Retriever
    chunks: list[Chunk]
    build_seconds: float
    models: dict[str, Any]
    embeddings: dict[str, int] | None = None
    """The corpus embeddings the build took from the cache and computed (:func:`embedding_counts`)."""

    def info(self) -> dict[str, Any]:
        return {
            "name": self.config.name,
            "config": self.config.to_dict(),
            "config_sha256": self.config.sha256(),
            "chunks": len(self.chunks),
            "index_build_seconds": round(self.build_seconds, 3),
            **({"embeddings": self.embeddings} if self.embeddings is not None else {}),
            "models": self.models,
            **({"fitted": fitted} if (fitted := fitted_stages(self.retriever)) else {}),
        }


def fitted_stages(retriever: Retriever) -> list[dict[str, Any]]:
    """The stages of a built retriever that were fitted on a golden set (a reranker or rewriter with a
    ``fitted_on`` mapping, as the learned fusion stage has), outermost first: ``[{"stage", "name",
    "fitted_on"}]`` (:mod:`ragaudit.artifacts.in_sample` decides whether a report is in-sample)."""
    found: list[dict[str, Any]] = []
    seen: set[int] = set()
    current: Any = retriever
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        for role in ("reranker", "rewriter"):
            stage = getattr(current, role, None)
            fitted = getattr(stage, "fitted_on", None)
            if isinstance(fitted, Mapping):
                found.append({"stage": role, "name": str(getattr(stage, "name", role)), "fitted_on": fitted})
        current = getattr(current, "base", None)
    return found


def chunk_key(config: PipelineConfig, corpus: Corpus) -> str:
    """What a chunking's chunks and indexes are cached under: the corpus and the chunking."""
    c = config.chunking
    return f"{corpus.sha256}:{c.strategy}:{c.size}:{c.overlap}"


def chunk_with(config: PipelineConfig, corpus: Corpus, cache: ComponentCache | None = None) -> list[Chunk]:
    c = config.chunking
    key = chunk_key(config, corpus)
    if cache is not None and key in cache.chunks:
        return cache.chunks[key]
    chunks = chunk_corpus(corpus, make_chunker(c.strategy, c.size, c.overlap))
    if cache is not None:
        cache.chunks[key] = chunks
    return chunks


def _bm25(stage: StageConfig, chunks: Sequence[Chunk]) -> Retriever:
    from ragaudit.retrieval.bm25 import BM25Retriever

    return BM25Retriever.from_chunks(chunks, **dict(stage.params))


QDRANT_CLUSTER_KEYS = {
    "shards": "shard_number",
    "replication_factor": "replication_factor",
    "write_consistency_factor": "write_consistency_factor",
    "on_disk": "on_disk",
}
"""Dense-stage TOML keys that configure a new Qdrant collection on a cluster (docs/scale.md)."""


def collection_name(stage: StageConfig, chunk_key: str) -> str:
    """The default Qdrant collection of a dense stage: one per pipeline index, named after what
    decides its points (corpus, chunking, model, backend, sparse vectors or not), so a rerun reuses
    it and two pipelines whose points differ never share one."""
    p = stage.params
    ident = json.dumps(
        [chunk_key, p.get("model"), p.get("backend"), bool(p.get("hybrid_sparse", False))], sort_keys=True
    )
    return "ragaudit-" + hashlib.sha256(ident.encode()).hexdigest()[:16]


def _stage_params(stage: StageConfig, overrides: Mapping[str, Any]) -> dict[str, Any]:
    return {**dict(stage.params), **{k: v for k, v in overrides.items() if v is not None}}


def stage_encoder(stage: StageConfig, overrides: Mapping[str, Any] | None = None) -> TextEncoder:
    """The encoder a dense stage embeds with: its model and backend, behind its embedding cache
    (``cache_dir``; on by default)."""
    from ragaudit.retrieval.dense import make_encoder

    p = _stage_params(stage, overrides or {})
    return make_encoder(p.get("model"), p.get("cache_dir", True), backend=p.get("backend"))


def dense_store(
    stage: StageConfig, overrides: Mapping[str, Any], chunk_key: str
) -> tuple[StoreKind, dict[str, Any]]:
    """The vector store a dense stage indexes into and its options (``overrides`` win over the stage's
    keys: ``qdrant_url`` from ``--qdrant-url``, ``collection`` from a caller that names its own)."""
    p = _stage_params(stage, overrides)
    store: StoreKind = (
        "qdrant" if p.get("qdrant_url") or p.get("qdrant_path") or p.get("store") == "qdrant" else "exact"
    )
    options: dict[str, Any] = {}
    if store == "qdrant":
        if p.get("qdrant_url"):
            options["url"] = p["qdrant_url"]
            key_env = p.get("qdrant_api_key_env")
            if key_env and os.environ.get(str(key_env)):
                options["api_key"] = os.environ[str(key_env)]
        elif p.get("qdrant_path"):
            options["path"] = p["qdrant_path"]
        else:
            options["location"] = ":memory:"
        # one collection per corpus and chunking, so re-runs reuse it and different corpora never mix
        options["collection"] = p.get("collection", collection_name(stage, chunk_key))
        options["hybrid"] = bool(p.get("hybrid_sparse", False))
        for key, option in QDRANT_CLUSTER_KEYS.items():
            if p.get(key) is not None:
                options[option] = p[key]
    return store, options


def _dense(
    stage: StageConfig, chunks: Sequence[Chunk], overrides: Mapping[str, Any], chunk_key: str
) -> Retriever:
    from ragaudit.retrieval.dense import DenseRetriever

    store, options = dense_store(stage, overrides, chunk_key)
    return DenseRetriever.from_chunks(chunks, store=store, model=stage_encoder(stage, overrides), **options)


def make_hybrid(stage: StageConfig, parts: Sequence[Retriever]) -> Retriever:
    """A ``hybrid`` stage over its built components (fused by its ``method``, ``weights``, ...)."""
    from ragaudit.retrieval.fusion import HybridRetriever

    p = dict(stage.params)
    return HybridRetriever(
        list(parts),
        method=p.get("method", "rrf"),
        weights=p.get("weights"),
        rrf_k=p.get("rrf_k", 60.0),
        normalize=p.get("normalize", "minmax"),
        depth=p.get("depth", 100),
    )


FirstStageBuilder = Callable[[StageConfig, Sequence[Chunk], str], tuple[Retriever, float]]
"""Builds (or loads) a pipeline's first stage from its configuration, chunks and chunk key; returns it
and the seconds it took (``ragaudit serve``'s persisted index is one)."""


def build_first_stage(
    stage: StageConfig,
    chunks: Sequence[Chunk],
    cache: ComponentCache,
    chunk_key: str,
    overrides: Mapping[str, Any],
) -> tuple[Retriever, float]:
    """The first-stage retriever for ``stage`` and the seconds its indexes took to build (also when
    they were built earlier for another pipeline and are reused now)."""
    key = f"{chunk_key}:{json.dumps(stage.to_dict(), sort_keys=True)}"
    if key in cache.retrievers:
        return cache.retrievers[key]
    started = time.perf_counter()
    parts_seconds = 0.0
    if stage.type == "bm25":
        retriever = _bm25(stage, chunks)
    elif stage.type == "dense":
        retriever = _dense(stage, chunks, overrides, chunk_key)
    else:
        built = [build_first_stage(c, chunks, cache, chunk_key, overrides) for c in stage.components]
        parts_seconds = sum(b[1] for b in built)
        started = time.perf_counter()
        retriever = make_hybrid(stage, [b[0] for b in built])
    elapsed = parts_seconds + time.perf_counter() - started
    cache.retrievers[key] = (retriever, elapsed)
    return retriever, elapsed


def _models(stage: StageConfig) -> list[str]:
    if stage.type == "dense":
        from ragaudit.retrieval.embedder import DEFAULT_BACKEND, DEFAULT_MODEL

        model, backend = stage.params.get("model"), stage.params.get("backend")
        return [f"{model or DEFAULT_MODEL} ({backend or ('default' if model else DEFAULT_BACKEND)})"]
    return [m for c in stage.components for m in _models(c)]


def build_pipeline(
    config: PipelineConfig,
    corpus: Corpus,
    *,
    cache: ComponentCache | None = None,
    qdrant_url: str | None = None,
    first_stage: FirstStageBuilder | None = None,
) -> BuiltPipeline:
    """Chunk the corpus, build (or reuse) the first stage, wrap it in the rerank and rewrite stages.

    ``first_stage`` replaces :func:`build_first_stage` (``cache`` then holds the chunking only)."""
    from ragaudit.pipelines.stages import wrap_rerank, wrap_rewrite

    shared = cache if cache is not None else ComponentCache()
    chunks = chunk_with(config, corpus, shared)
    overrides = {"qdrant_url": qdrant_url}
    key = chunk_key(config, corpus)
    if first_stage is not None:
        retriever, index_seconds = first_stage(config.retriever, chunks, key)
    else:
        retriever, index_seconds = build_first_stage(config.retriever, chunks, shared, key, overrides)
    embeddings = embedding_counts(retriever)  # before any query (queries bypass the cache anyway)
    started = time.perf_counter()
    models: dict[str, Any] = {"embedding": _models(config.retriever)}
    if config.rewrite is not None:  # rewriting feeds the first stage (RM3 takes feedback from it)
        retriever, rewriter = wrap_rewrite(retriever, config.rewrite)
        models["rewriter"] = rewriter
    if config.rerank is not None:  # the reranker judges candidates against the user's original query
        retriever, reranker_model = wrap_rerank(retriever, config.rerank)
        models["reranker"] = reranker_model
    seconds = index_seconds + time.perf_counter() - started
    return BuiltPipeline(config, retriever, chunks, seconds, models, embeddings)
