"""``--executor local`` against a 2-worker local Ray cluster: corpus embedding and a 6-cell sweep.

What is measured, once each (one run, so the ratio comes from one run; the machine is shared):

1. Ray's fixed costs: starting the cluster (a head and one worker node on 127.0.0.1, 1 CPU each, no
   dashboard), and one Ray Data embedding run of a single text (two actors are started and each
   loads the model once): the overhead every distributed embedding pays before its first vector.
2. Embedding throughput on each corpus (the demo KB chunked ``fixed-128-0``; ``--msmarco-docs``
   passages of the shared msmarco subset): the local path (``EmbeddingCache.embed``: one process,
   ONNX Runtime on every core) against :func:`ragaudit.pipelines.distribute.prefill_embeddings` on
   the cluster (Ray Data ``map_batches``, one actor per CPU, 1 ONNX thread each), each into an empty
   cache. Texts/s, the ratio, texts/s per actor, and whether the vectors are equal bit for bit.
3. A 6-cell chunking sweep (``fixed`` and ``recursive`` x 64 / 128 / 256 tokens, the dense preset,
   top 10) with ``--executor local`` and ``--executor ray``, each from an empty embedding cache: wall
   seconds, the ratio, and whether the two results are equal apart from timing and provenance.

4. ``--part cache`` (alone, no cluster): the driver-side rates that bound a very large run: planning
   (``EmbeddingCache.missing``: hash + lookup) and writing (``EmbeddingCache.store`` in batches of 256,
   and in one transaction) 20,000 vectors of 384 floats into an empty cache.

On 2 cores expect at most 2x: the local path already runs ONNX Runtime on both cores, so the ray
figures mostly show what Ray adds. The results go to stdout and ``bench/_data/scale_bench.json``.

Run: ``PYTHONPATH=src RAGAUDIT_SHARED_DATA=/work/shared/data .venv/bin/python bench/scale_bench.py``
(needs the ``ray`` extra; ``--msmarco-docs 0`` skips msmarco).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Ray resolves "this machine" to 127.0.0.1 and reports nothing home; set before ray is imported.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
os.environ["RAY_USAGE_STATS_ENABLED"] = "0"

from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.data.schema import Dataset
from ragaudit.evaluation.live import RunOptions
from ragaudit.experiments.chunking_sweep import chunking_grid, load_span_dataset, sweep_chunking
from ragaudit.metrics.names import parse_metrics
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.build import chunk_with
from ragaudit.pipelines.config import ChunkingConfig, PipelineConfig, preset
from ragaudit.pipelines.distribute import prefill_embeddings
from ragaudit.retrieval.embedder import Embedder
from ragaudit.retrieval.embedding_cache import EmbeddingCache
from ragaudit.runner.executor import Executor

HERE = Path(__file__).resolve().parent
KB = HERE.parent / "src" / "ragaudit" / "demo_data" / "kb"
SHARED = Path(os.environ.get("RAGAUDIT_SHARED_DATA", HERE.parents[1] / "shared" / "data"))
MSMARCO = SHARED / "beir" / "msmarco"
OUT = HERE / "_data" / "scale_bench.json"
TIMING = {"created_at", "latency_ms", "index_build_seconds", "build_seconds", "embed_seconds", "git"}


def untimed(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in TIMING and k != "executor"}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - started


def msmarco_subset(docs: int, folder: Path) -> Path:
    """A BEIR folder with every judged passage plus the first ``docs`` others, and all queries."""
    judged = {line.split("\t")[1] for line in (MSMARCO / "qrels" / "test.tsv").read_text().splitlines()[1:]}
    kept = []
    for line in (MSMARCO / "corpus.jsonl").read_text(encoding="utf-8").split("\n"):
        if not line.strip():
            continue
        doc_id = json.loads(line)["_id"]
        if doc_id in judged or len(kept) < docs:
            kept.append(line)
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("\n".join(kept) + "\n", encoding="utf-8")
    (folder / "queries.jsonl").write_text((MSMARCO / "queries.jsonl").read_text(encoding="utf-8"))
    (folder / "qrels" / "test.tsv").write_text((MSMARCO / "qrels" / "test.tsv").read_text())
    return folder


def with_cache(config: PipelineConfig, cache_dir: Path) -> PipelineConfig:
    from dataclasses import replace
    from types import MappingProxyType

    stage = config.retriever
    return replace(
        config,
        retriever=replace(
            stage, params=MappingProxyType({**dict(stage.params), "cache_dir": str(cache_dir)})
        ),
    )


def embedding(corpus: Corpus, executor: Executor, actors: int, work: Path, name: str) -> dict[str, Any]:
    config = preset("dense")
    config = replace_chunking(config, ChunkingConfig("fixed", 128, 0))
    texts = [c.index_text for c in chunk_with(config, corpus)]
    with EmbeddingCache(Embedder(), work / f"{name}-local") as local:
        expected, local_s = timed(lambda: local.embed(texts))
    prefill, ray_s = timed(
        lambda: prefill_embeddings([with_cache(config, work / f"{name}-ray")], corpus, executor)
    )
    with EmbeddingCache(Embedder(), work / f"{name}-ray") as filled:
        got = filled.embed(texts)
        identical = filled.misses == 0 and got.tobytes() == expected.tobytes()
    n = len(set(texts))
    used = int(prefill.runs[0]["actors"]) if prefill.runs else actors  # at most one actor per batch of 256
    return {
        "corpus": name,
        "texts": n,
        "local_s": round(local_s, 2),
        "local_texts_per_s": round(n / local_s, 1),
        "ray_s": round(ray_s, 2),
        "ray_texts_per_s": round(n / ray_s, 1),
        "ray_per_actor_texts_per_s": round(n / ray_s / used, 1),
        "ratio_ray_over_local": round(local_s / ray_s, 2),
        "bit_identical": identical,
        "ray_run": prefill.runs[0] if prefill.runs else None,
    }


def replace_chunking(config: PipelineConfig, chunking: ChunkingConfig) -> PipelineConfig:
    from dataclasses import replace

    return replace(config, chunking=chunking)


def sweep(
    dataset: Dataset, corpus: Corpus, executor: Executor | None, cache: Path
) -> tuple[dict[str, Any], float]:
    grid, _ = chunking_grid(["fixed", "recursive"], [64, 128, 256], [0])
    assert len(grid) == 6
    result, seconds = timed(
        lambda: asyncio.run(
            sweep_chunking(
                dataset,
                corpus,
                with_cache(preset("dense"), cache),
                grid,
                parse_metrics("R@10,nDCG@10"),
                Policy(),
                RunOptions(top_k=10, progress=False, concurrency=1),
                resamples=1000,
                executor=executor,
            )
        )
    )
    out: dict[str, Any] = result.to_dict()
    return out, seconds


def sweeps(dataset: Dataset, corpus: Corpus, executor: Executor, work: Path, name: str) -> dict[str, Any]:
    local, local_s = sweep(dataset, corpus, None, work / f"{name}-sweep-local")
    remote, ray_s = sweep(dataset, corpus, executor, work / f"{name}-sweep-ray")
    local["pipeline"] = remote["pipeline"] = None  # the configs differ in their cache folder only
    local["provenance"]["pipeline"] = remote["provenance"]["pipeline"] = None
    return {
        "corpus": name,
        "cells": 6,
        "embedded_texts": sum(p["index"]["embedded_texts"] or 0 for p in local["points"]),
        "local_s": round(local_s, 2),
        "ray_s": round(ray_s, 2),
        "ratio_ray_over_local": round(local_s / ray_s, 2),
        "ray_embedding_s": remote["provenance"]["executor"]["embedding"]["seconds"],
        "identical_apart_from_timing": untimed(local) == untimed(remote),
        "best": [local["best"], remote["best"]],
    }


def cache_rates(n: int = 20_000) -> dict[str, Any]:
    """Texts/s of planning and vectors/s of writing into an empty embedding cache (driver-side work)."""
    import numpy as np

    texts = [f"text number {i} about something" for i in range(n)]
    vectors = np.random.default_rng(0).normal(size=(n, 384)).astype(np.float32)
    out: dict[str, Any] = {"texts": n, "load_average": os.getloadavg()[0]}
    with EmbeddingCache(Embedder(), tempfile.mkdtemp(prefix="ragaudit-rates-")) as cache:
        missing, seconds = timed(lambda: cache.missing(texts))
        out["plan_texts_per_s"] = round(n / seconds)
        groups = cache.groups(missing)
        _, seconds = timed(lambda: [cache.store(g, vectors[: len(g)]) for g in groups])
        out["store_vectors_per_s_batches_of_256"] = round(n / seconds)
    with EmbeddingCache(Embedder(), tempfile.mkdtemp(prefix="ragaudit-rates-")) as cache:
        items = list(cache.missing(texts).items())
        _, seconds = timed(lambda: cache.store(items, vectors))
        out["store_vectors_per_s_one_transaction"] = round(n / seconds)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--msmarco-docs", type=int, default=1000, help="msmarco passages besides the judged ones"
    )
    parser.add_argument(
        "--part", choices=("all", "cache"), default="all", help="cache: only the driver rates"
    )
    args = parser.parse_args(argv)
    if args.part == "cache":
        print(json.dumps(cache_rates(), indent=2))
        return 0
    import ray
    from ray.cluster_utils import Cluster

    from ragaudit.runner.ray_executor import RayExecutor

    work = Path(tempfile.mkdtemp(prefix="ragaudit-scale-"))
    node = {"node_ip_address": "127.0.0.1", "num_cpus": 1, "object_store_memory": 100 * 1024 * 1024}
    started = time.perf_counter()
    cluster = Cluster(initialize_head=True, head_node_args={**node, "include_dashboard": False})
    cluster.add_node(**node)
    ray.init(address=cluster.address, log_to_driver=False)
    ray.data.DataContext.get_current().enable_progress_bars = False
    report: dict[str, Any] = {
        "cluster_start_s": round(time.perf_counter() - started, 2),
        "load_average_at_start": os.getloadavg()[0],
    }
    try:
        executor = RayExecutor()
        report["cluster"] = executor.info()
        report["cores"] = len(os.sched_getaffinity(0))
        _, overhead = timed(lambda: list(executor.embed_groups(Embedder(), [["one text"], ["another text"]])))
        report["ray_data_fixed_overhead_s"] = round(overhead, 2)
        corpora = [("demo-kb", load_corpus(KB / "corpus.jsonl"), KB / "golden.jsonl")]
        if args.msmarco_docs > 0 and MSMARCO.is_dir():
            folder = msmarco_subset(args.msmarco_docs, work / "msmarco")
            corpora.append(("msmarco", load_corpus(folder), folder))
        report["embedding"] = []
        report["sweep"] = []
        for name, corpus, data in corpora:
            report["embedding"].append(embedding(corpus, executor, executor.actors(), work, name))
            print(json.dumps(report["embedding"][-1]), flush=True)
            dataset = load_span_dataset(data, "auto", "test", 1, corpus)
            report["sweep"].append(sweeps(dataset, corpus, executor, work, name))
            print(json.dumps(report["sweep"][-1]), flush=True)
    finally:
        ray.shutdown()
        cluster.shutdown()
    report["load_average_at_end"] = os.getloadavg()[0]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    ok = all(e["bit_identical"] for e in report["embedding"]) and all(
        s["identical_apart_from_timing"] for s in report["sweep"]
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
