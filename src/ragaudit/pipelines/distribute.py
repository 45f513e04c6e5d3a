"""What an experiment does on the driver before its cells run elsewhere (``--executor ray``).

Two things are done once, here, for all cells:

- :func:`prebuild_sparse`: every cell's chunks and BM25 indexes, built into one
  :class:`~ragaudit.pipelines.build.ComponentCache` that is shipped to the workers once (Ray's object
  store). A cell finds its BM25 index there, with the seconds it took, exactly as when the cells
  share the cache in one process.
- :func:`prefill_embeddings`: every dense stage's chunk texts embedded into its embedding cache
  through the executor (Ray Data actors). The texts are planned in the order the cells would embed
  them one after another in one process: per cell, per dense stage, the texts not cached yet and not
  planned by an earlier cell, cut into the embedding cache's batches
  (:meth:`~ragaudit.retrieval.embedding_cache.EmbeddingCache.groups`). Each batch is one encoder call
  on an actor, so the vectors are the ones the local run computes, bit for bit. The cells then find
  every chunk vector cached. The plan also says, per cell, how many texts the cell would have
  embedded and how many it would have found cached, which a sweep reports.

The cells read the embedding cache file the driver wrote (the Ray executor gives them the driver's
cache folder): on one machine, or with ``RAGAUDIT_CACHE_DIR`` on storage every node mounts, they
embed nothing. A node that cannot see the file embeds the chunks of its cell itself, which gives
correct results at the cost of time.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ragaudit.corpus.loading import Corpus
from ragaudit.pipelines.build import ComponentCache, build_first_stage, chunk_key, chunk_with, stage_encoder
from ragaudit.pipelines.config import PipelineConfig, StageConfig
from ragaudit.retrieval.embedder import Embedder
from ragaudit.retrieval.embedding_cache import EmbeddingCache
from ragaudit.runner.executor import Executor


def stages(stage: StageConfig) -> Iterator[StageConfig]:
    """``stage`` and, for a hybrid, its components (depth first)."""
    yield stage
    for component in stage.components:
        yield from stages(component)


def prebuild_sparse(
    configs: Sequence[PipelineConfig], corpus: Corpus, cache: ComponentCache | None = None
) -> ComponentCache:
    """A cache holding every config's chunks and BM25 first stages (built once each)."""
    shared = cache if cache is not None else ComponentCache()
    for config in configs:
        chunks = chunk_with(config, corpus, shared)
        for stage in stages(config.retriever):
            if stage.type == "bm25":
                build_first_stage(stage, chunks, shared, chunk_key(config, corpus), {})
    return shared


@dataclass
class EmbeddingPrefill:
    """What :func:`prefill_embeddings` embedded, and the per-cell counts a local run would show."""

    cells: list[dict[str, int]] = field(default_factory=list)
    """Per cell: ``embedded`` (texts its dense stages would send to the model) and ``cached``."""
    texts: int = 0
    groups: int = 0
    seconds: float = 0.0
    runs: list[dict[str, Any]] = field(default_factory=list)
    """The executor's report of each embedding run (actors, group size, seconds), one per model."""

    def to_json(self) -> dict[str, Any]:
        return {
            "texts": self.texts,
            "groups": self.groups,
            "seconds": round(self.seconds, 3),
            "runs": self.runs,
        }


@dataclass
class _Job:
    cache: EmbeddingCache
    embedder: Embedder
    planned: set[bytes] = field(default_factory=set)
    batches: list[list[tuple[bytes, str]]] = field(default_factory=list)


def prefill_embeddings(
    configs: Sequence[PipelineConfig],
    corpus: Corpus,
    executor: Executor,
    cache: ComponentCache | None = None,
    qdrant_url: str | None = None,
) -> EmbeddingPrefill:
    """Embed every dense stage's chunk texts through ``executor`` (see the module docstring)."""
    shared = cache if cache is not None else ComponentCache()
    overrides = {"qdrant_url": qdrant_url}
    jobs: dict[tuple[str, str], _Job] = {}
    report = EmbeddingPrefill()
    for config in configs:
        chunks = chunk_with(config, corpus, shared)
        texts = [c.index_text for c in chunks]
        embedded = cached = 0
        for stage in stages(config.retriever):
            if stage.type != "dense":
                continue
            encoder = stage_encoder(stage, overrides)
            if not isinstance(encoder, EmbeddingCache) or not isinstance(encoder.encoder, Embedder):
                continue  # no cache to fill: the cell embeds for itself
            job = jobs.setdefault((encoder.fingerprint, str(encoder.path)), _Job(encoder, encoder.encoder))
            missing = job.cache.missing(texts, job.planned)
            job.planned.update(missing)
            job.batches += job.cache.groups(missing)
            embedded += len(missing)
            cached += len(set(texts)) - len(missing)
        report.cells.append({"embedded": embedded, "cached": cached})
    started = time.perf_counter()
    for job in jobs.values():
        if not job.batches:
            continue
        for index, matrix in executor.embed_groups(job.embedder, [[t for _, t in b] for b in job.batches]):
            job.cache.store(job.batches[index], matrix)  # written as each batch arrives
        report.texts += sum(len(b) for b in job.batches)
        report.groups += len(job.batches)
        last = getattr(executor, "last_embedding", None)
        report.runs.append(dict(last) if isinstance(last, dict) else {"groups": len(job.batches)})
    report.seconds = time.perf_counter() - started
    for job in jobs.values():
        job.cache.close()
    return report


@dataclass
class Distributed:
    """What a non-local run prepared on the driver: the shared cache, the embedding prefill, and the
    provenance entry that names the executor, the cluster and the prefill."""

    cache: ComponentCache
    prefill: EmbeddingPrefill
    provenance: dict[str, Any]


def prepare_distributed(
    configs: Sequence[PipelineConfig],
    corpus: Corpus,
    executor: Executor,
    cache: ComponentCache | None = None,
    qdrant_url: str | None = None,
) -> Distributed:
    """:func:`prefill_embeddings`, then :func:`prebuild_sparse`, for the cells' ``configs`` in order."""
    shared = cache if cache is not None else ComponentCache()
    prefill = prefill_embeddings(configs, corpus, executor, shared, qdrant_url)
    prebuild_sparse(configs, corpus, shared)
    return Distributed(shared, prefill, {**executor.info(), "embedding": prefill.to_json()})
