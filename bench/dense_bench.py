"""Dense retrieval on BEIR msmarco (5,000 passages): embedding-cache speed-up, build time, queries/s,
quality, and Qdrant's server-side sparse / hybrid search against the ``bm25`` retriever.

1. The dense pipeline (load data, embed the corpus through the on-disk cache, build the exact store,
   embed and search every query at depth 100, score) runs twice in fresh processes: first with an
   empty cache (cold), then again (warm). Target: the rerun is >= 10x faster.
2. In this process (embeddings now cached): the exact store and Qdrant local mode (dense, BM25-style
   sparse, plain-TF sparse, and dense + sparse hybrid with server-side RRF), against ``BM25Retriever``.
   Target: Qdrant's BM25-style sparse search within 0.01 nDCG@10 of ``BM25Retriever``.

Metrics: ``ragaudit.evaluate`` with ``Policy(gain="linear")`` (trec_eval / BEIR gain). The script
exits 1 when a target is missed.

Run: ``.venv/bin/python bench/dense_bench.py`` (the cache lives in ``bench/_data/dense_cache``;
``--keep-cache`` skips emptying it, so both runs are warm).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ragaudit.corpus.model import Chunk, Document, whole_document_chunk
from ragaudit.data.beir import DEFAULT_TENANT, iter_beir_corpus, load_beir
from ragaudit.data.schema import Dataset
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.metrics.policy import Policy
from ragaudit.retrieval.bm25 import BM25Retriever
from ragaudit.retrieval.dense import DenseRetriever
from ragaudit.retrieval.embedder import Embedder
from ragaudit.retrieval.embedding_cache import CACHE_FILE, EmbeddingCache
from ragaudit.retrieval.qdrant_store import QdrantVectorStore, QueryMode
from ragaudit.retrieval.vector_store import ExactVectorStore, Hit

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parents[1] / "shared" / "data" / "beir" / "msmarco"
DEFAULT_CACHE = HERE / "_data" / "dense_cache"
METRICS = "nDCG@10,R@100"
DEPTH = 100
SPEEDUP_TARGET = 10.0
SPARSE_TARGET = 0.01


def load(folder: Path) -> tuple[list[Chunk], Dataset]:
    docs = [
        Document(str(d["doc_id"]), DEFAULT_TENANT, str(d["text"]), str(d["title"]))  # BEIR has one tenant
        for d in iter_beir_corpus(folder / "corpus.jsonl")
    ]
    return [whole_document_chunk(d) for d in docs], load_beir(folder)


def score(dataset: Dataset, rankings: Sequence[Sequence[str]]) -> dict[str, float]:
    run = {c.id: list(r) for c, r in zip(dataset.cases, rankings, strict=True)}
    return dict(evaluate(dataset, run, METRICS, Policy(gain="linear")).metrics)


def pipeline(data: Path, cache_dir: Path) -> dict[str, Any]:
    """The whole dense pipeline, as a user runs it (executed in a child process)."""
    started = time.perf_counter()
    chunks, dataset = load(data)
    loaded = time.perf_counter()
    retriever = DenseRetriever.from_chunks(chunks, cache=cache_dir)
    built = time.perf_counter()
    queries = [c.query for c in dataset.cases]
    results = retriever.search_many(DEFAULT_TENANT, queries, DEPTH)
    searched = time.perf_counter()
    metrics = score(dataset, [[r["chunk_id"] for r in row] for row in results])
    info = retriever.info()
    return {
        "load_s": loaded - started,
        "build_s": built - loaded,
        "query_s": searched - built,
        "in_process_s": time.perf_counter() - started,
        "queries": len(queries),
        "metrics": metrics,
        "timings": info["timings"],
        "cache": info["cache"],
        "model": info["model"],
    }


def run_child(data: Path, cache_dir: Path) -> dict[str, Any]:
    started = time.perf_counter()
    out = subprocess.run(
        [sys.executable, __file__, "--child", "--data", str(data), "--cache-dir", str(cache_dir)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"},
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    result["wall_s"] = time.perf_counter() - started
    return result


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    started = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - started


def ids(rows: Sequence[Sequence[Hit]]) -> list[list[str]]:
    return [[h.chunk.chunk_id for h in row] for row in rows]


def compare_stores(data: Path, cache_dir: Path) -> dict[str, Any]:
    chunks, dataset = load(data)
    queries = [c.query for c in dataset.cases]
    with EmbeddingCache(Embedder(), cache_dir) as cache:
        doc_vectors = cache.embed([c.index_text for c in chunks])
        query_vectors = cache.embed(queries)
    out: dict[str, Any] = {"docs": len(chunks), "queries": len(queries), "answerable": 0}
    out["answerable"] = sum(1 for c in dataset.cases if c.is_answerable())

    exact = ExactVectorStore()
    _, out["exact_build_s"] = timed(lambda: exact.add(chunks, doc_vectors))
    exact_rows, exact_s = timed(lambda: exact.search_many(DEFAULT_TENANT, query_vectors, DEPTH))
    out["exact"] = {"metrics": score(dataset, ids(exact_rows)), "qps": len(queries) / exact_s}

    bm25, bm25_build = timed(lambda: BM25Retriever.from_chunks(chunks))
    bm25_rows, bm25_s = timed(lambda: bm25.search_many(DEFAULT_TENANT, queries, DEPTH))
    out["bm25"] = {
        "metrics": score(dataset, [[r["chunk_id"] for r in row] for row in bm25_rows]),
        "build_s": bm25_build,
        "qps": len(queries) / bm25_s,
    }

    for scheme in ("bm25", "tf"):
        store = QdrantVectorStore(f"msmarco-{scheme}", location=":memory:", hybrid=True, sparse_scheme=scheme)
        started = time.perf_counter()
        store.add(chunks, doc_vectors)
        build_s = time.perf_counter() - started
        modes: tuple[QueryMode, ...] = (
            ("dense", "sparse", "hybrid") if scheme == "bm25" else ("sparse", "hybrid")
        )
        for mode in modes:
            started = time.perf_counter()
            rows = store.search_many(DEFAULT_TENANT, query_vectors, DEPTH, texts=queries, mode=mode)
            entry: dict[str, Any] = {
                "metrics": score(dataset, ids(rows)),
                "qps": len(queries) / (time.perf_counter() - started),
                "build_s": build_s,
            }
            if mode == "dense":
                entry["same_top10_as_exact"] = sum(
                    a[:10] == b[:10] for a, b in zip(ids(rows), ids(exact_rows), strict=True)
                )
            out[f"qdrant_{mode}" + ("_tf" if scheme == "tf" else "")] = entry
        store.close()
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--keep-cache", action="store_true", help="do not empty the cache first")
    parser.add_argument("--out", type=Path, default=HERE / "_data" / "dense_bench.json")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(pipeline(args.data, args.cache_dir)))
        return 0
    if not (args.data / "corpus.jsonl").is_file():
        print(f"no BEIR data at {args.data}", file=sys.stderr)
        return 2
    if not args.keep_cache:
        for suffix in ("", "-wal", "-shm"):
            (args.cache_dir / (CACHE_FILE + suffix)).unlink(missing_ok=True)
    cold = run_child(args.data, args.cache_dir)
    warm = run_child(args.data, args.cache_dir)
    stores = compare_stores(args.data, args.cache_dir)
    result = {"cold": cold, "warm": warm, "stores": stores}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2), encoding="utf-8")

    speedup = cold["wall_s"] / warm["wall_s"]
    print(f"pipeline wall s: cold {cold['wall_s']:.1f}, warm {warm['wall_s']:.1f} -> {speedup:.1f}x")
    for name in ("cold", "warm"):
        r = result[name]
        t = r["timings"]
        print(
            f"  {name}: load {r['load_s']:.1f}s build {r['build_s']:.1f}s (embed {t['embed_s']:.1f}s, index "
            f"{t['index_s']:.3f}s) queries {r['query_s']:.2f}s ({r['queries'] / r['query_s']:.0f} q/s incl. "
            f"embedding) cache hits {r['cache']['hits']} misses {r['cache']['misses']} {r['metrics']}"
        )
    print(f"exact store: build {stores['exact_build_s']:.3f}s")
    for name in (
        "exact",
        "bm25",
        "qdrant_dense",
        "qdrant_sparse",
        "qdrant_sparse_tf",
        "qdrant_hybrid",
        "qdrant_hybrid_tf",
    ):
        entry = stores[name]
        m = entry["metrics"]
        extra = f" build {entry['build_s']:.2f}s" if "build_s" in entry else ""
        same = (
            f" same top-10 as exact {entry['same_top10_as_exact']}" if "same_top10_as_exact" in entry else ""
        )
        print(
            f"  {name:17s} nDCG@10 {m['nDCG@10']:.4f} R@100 {m['R@100']:.4f} {entry['qps']:.0f} q/s{extra}{same}"
        )
    gap = stores["qdrant_sparse"]["metrics"]["nDCG@10"] - stores["bm25"]["metrics"]["nDCG@10"]
    ok_speed = speedup >= SPEEDUP_TARGET
    ok_sparse = abs(gap) <= SPARSE_TARGET
    print(f"target rerun >= {SPEEDUP_TARGET:g}x: {'met' if ok_speed else 'MISSED'} ({speedup:.1f}x)")
    print(
        f"target |qdrant sparse - bm25| <= {SPARSE_TARGET}: {'met' if ok_sparse else 'MISSED'} ({gap:+.4f})"
    )
    return 0 if ok_speed and ok_sparse else 1


if __name__ == "__main__":
    raise SystemExit(main())
