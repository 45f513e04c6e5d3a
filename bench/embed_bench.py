"""Embedding speed, batch invariance and quality: the default ``onnx-int8`` backend against torch.

Speed (issue 25 item 2), interleaved in one run: for ``--rounds`` rounds, each backend (``torch`` =
sentence-transformers, then ``onnx-int8``) runs in a fresh child process, alternating, so a load
spike on the shared machine hits both alike. A child loads the model, warms it up, then measures

- **long texts**: docs/s over ``--docs`` texts of 256+ tokens (consecutive passages of the shared
  BEIR sets joined until the tokenizer counts 256 tokens; the model truncates at 256, so every text
  is a full SciFact-length input), embedded in one ``Embedder.encode`` call;
- **single query**: the median latency of ``--queries`` BEIR queries embedded one call each.

Each round prints both backends and the ratio, and the same ratios per CPU-second (``process_time``,
which counts threads that spin while they wait, so it is no cure for a crowded machine; ``--threads
1`` gives the cleanest comparison there); the verdict uses the median over rounds of
the per-round wall-clock ratios (targets: long texts >= 2x torch's docs/s, single query >= 3x lower
latency). ``--threads N`` runs both backends on N threads (default: every core).

Batch invariance (issue 23 item 1): each backend embeds ``--invariance-texts`` long texts and queries
alone, then in shuffled batches of 3, 16 and all of them, and prints the largest absolute coordinate
difference (0 means bit-identical).

Quality (``--quality``): nDCG@10 (linear gain) of the dense retriever per backend on ``--sets``
(default msmarco, dbpedia), vectors through the embedding cache ``--cache-dir`` (default
``bench/_data/embed_cache``); target |onnx-int8 - torch| <= 0.005 per set.

The kernel path is printed: CPU flags (AVX-512 VNNI, AVX-512 BF16, AMX), ONNX Runtime version,
providers, session options and threads, the int8 graph's operators, torch's threads.

Run: ``.venv/bin/python bench/embed_bench.py [--rounds 3] [--docs 200] [--queries 50] [--quality]``.
Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
BEIR_ROOT = Path(os.environ.get("RAGAUDIT_SHARED_DATA", HERE.parents[1] / "shared" / "data")) / "beir"
DEFAULT_CACHE = HERE / "_data" / "embed_cache"
LONG_TOKENS = 256
DOCS_TARGET = 2.0  # x torch docs/s on long texts
QUERY_TARGET = 3.0  # x lower single-query latency than torch
QUALITY_TOLERANCE = 0.005  # |nDCG@10 - torch|
CPU_FLAGS = ("avx512_vnni", "avx_vnni", "avx512_bf16", "amx_int8", "amx_bf16", "amx_tile")


def long_texts(count: int) -> list[str]:
    """``count`` texts of at least 256 tokens: consecutive BEIR passages (msmarco, then dbpedia) joined."""
    from ragaudit.retrieval.embedder import Embedder

    tokenizer = Embedder().model.tokenizer  # type: ignore[attr-defined]
    texts: list[str] = []
    for name in ("msmarco", "dbpedia"):
        parts: list[str] = []
        with (BEIR_ROOT / name / "corpus.jsonl").open(encoding="utf-8") as handle:
            for line in handle:
                row = json.loads(line)
                parts.append(" ".join(p for p in (row.get("title"), row.get("text")) if p))
                joined = " ".join(parts)
                if len(tokenizer.encode(joined).ids) >= LONG_TOKENS:
                    texts.append(joined)
                    parts = []
                    if len(texts) == count:
                        return texts
    return texts


def queries(count: int) -> list[str]:
    out: list[str] = []
    for name in ("msmarco", "dbpedia"):
        with (BEIR_ROOT / name / "queries.jsonl").open(encoding="utf-8") as handle:
            out += [json.loads(line)["text"] for line in handle]
    return out[:count]


def cpu_flags() -> list[str]:
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return []
    flags = set(next((ln.split(":", 1)[1].split() for ln in text.splitlines() if ln.startswith("flags")), []))
    return [f for f in CPU_FLAGS if f in flags]


def kernel_path(embedder: Any) -> dict[str, Any]:
    """What runs the backend's arithmetic, as far as Python can see it."""
    info: dict[str, Any] = {"cpu_flags": cpu_flags(), "cores": os.cpu_count()}
    if embedder.on_onnx:
        model = embedder.model
        session = model.session
        options = session.get_session_options()
        int8_ops: Counter[str] = Counter()
        try:
            import onnx
        except ImportError:  # the graph's operators are listed only with the export extra's onnx
            int8_ops["(not listed: onnx is not installed)"] = 0
        else:
            graph = onnx.load(str(embedder.path / "model.onnx"))
            int8_ops.update(
                n.op_type for n in graph.graph.node if "Integer" in n.op_type or "Quantize" in n.op_type
            )
        info.update(
            {
                "onnxruntime": embedder.info().get("onnxruntime"),
                "providers": session.get_providers(),
                "intra_op_threads": options.intra_op_num_threads,
                "inter_op_threads": options.inter_op_num_threads,
                "graph_optimization": str(options.graph_optimization_level),
                "int8_ops": dict(int8_ops),
                "gemm": f"{'/'.join(op for op in int8_ops if 'MatMul' in op)}: u8 x s8 -> int32 (MLAS QGEMM; MLAS "
                "picks its AVX512-VNNI kernel from CPUID when avx512_vnni is present; AMX is not in these flags)",
            }
        )
    else:
        import torch

        info.update({"torch": torch.__version__, "torch_threads": torch.get_num_threads()})
    return info


def child_speed(backend: str, n_docs: int, n_queries: int, threads: int | None) -> dict[str, Any]:
    from ragaudit.retrieval.embedder import Embedder

    docs = long_texts(n_docs)
    asked = queries(n_queries)
    embedder = Embedder(backend=backend, threads=threads)
    if threads and backend == "torch":
        import torch

        torch.set_num_threads(threads)
    embedder.encode(docs[:4])
    embedder.encode(asked[:4])
    started, cpu_started = time.perf_counter(), time.process_time()
    embedder.encode(docs)
    docs_s, docs_cpu = time.perf_counter() - started, time.process_time() - cpu_started
    latencies, cpu_latencies = [], []
    for query in asked:
        started, cpu_started = time.perf_counter(), time.process_time()
        embedder.encode([query])
        latencies.append(time.perf_counter() - started)
        cpu_latencies.append(time.process_time() - cpu_started)
    return {
        "backend": backend,
        "docs": len(docs),
        "docs_per_s": len(docs) / docs_s,
        "docs_per_cpu_s": len(docs) / docs_cpu,
        "query_ms": 1000 * statistics.median(latencies),
        "query_cpu_ms": 1000 * statistics.median(cpu_latencies),
        "load": os.getloadavg()[0],
        "kernel": kernel_path(embedder),
    }


def child_invariance(backend: str, n_texts: int) -> dict[str, Any]:
    from ragaudit.retrieval.embedder import Embedder

    texts = long_texts(n_texts // 2) + queries(n_texts - n_texts // 2)
    embedder = Embedder(backend=backend)
    alone = np.stack([embedder.encode([t])[0] for t in texts])
    worst: dict[str, float] = {}
    for size in (3, 16, len(texts)):
        order = list(range(len(texts)))
        random.Random(size).shuffle(order)
        together = np.empty_like(alone)
        for start in range(0, len(order), size):
            part = order[start : start + size]
            together[part] = embedder.encode([texts[i] for i in part])
        worst[str(size)] = float(np.abs(together - alone).max())
    return {"backend": backend, "texts": len(texts), "max_abs_diff": worst}


def child_quality(backend: str, name: str, cache_dir: str) -> dict[str, Any]:
    sys.path.insert(0, str(HERE))
    from dense_bench import DEPTH, load, score
    from ragaudit.data.beir import DEFAULT_TENANT
    from ragaudit.retrieval.dense import DenseRetriever

    chunks, dataset = load(BEIR_ROOT / name)
    retriever = DenseRetriever.from_chunks(chunks, backend=backend, cache=cache_dir)
    rows = retriever.search_many(DEFAULT_TENANT, [c.query for c in dataset.cases], DEPTH)
    return {"nDCG@10": score(dataset, [[r["chunk_id"] for r in row] for row in rows])["nDCG@10"]}


def child(*arguments: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, __file__, *arguments],
        check=True,
        capture_output=True,
        text=True,
        env={
            **os.environ,
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "TOKENIZERS_PARALLELISM": "false",
        },
    )
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--docs", type=int, default=200, help="long texts per speed round")
    parser.add_argument("--queries", type=int, default=50, help="single queries per speed round")
    parser.add_argument("--invariance-texts", type=int, default=40)
    parser.add_argument("--threads", type=int, help="threads for both backends (default: every core)")
    parser.add_argument("--quality", action="store_true", help="also nDCG@10 per backend on --sets")
    parser.add_argument("--sets", default="msmarco,dbpedia")
    parser.add_argument("--cache-dir", default=str(DEFAULT_CACHE))
    parser.add_argument("--out", type=Path, default=HERE / "_data" / "embed_bench.json")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        kind, backend, *rest = args.child
        if kind == "speed":
            result = child_speed(backend, args.docs, args.queries, args.threads)
        elif kind == "invariance":
            result = child_invariance(backend, args.invariance_texts)
        else:
            result = child_quality(backend, rest[0], args.cache_dir)
        print(json.dumps(result))
        return 0
    if not (BEIR_ROOT / "msmarco" / "corpus.jsonl").is_file():
        print(f"no BEIR data at {BEIR_ROOT}", file=sys.stderr)
        return 2
    backends = ("torch", "onnx-int8")
    common = ["--docs", str(args.docs), "--queries", str(args.queries)]
    common += ["--threads", str(args.threads)] if args.threads else []
    rounds: list[dict[str, dict[str, Any]]] = []
    for number in range(1, args.rounds + 1):
        this = {b: child(*common, "--child", "speed", b) for b in backends}
        rounds.append(this)
        t, o = this["torch"], this["onnx-int8"]
        print(
            f"round {number}: long texts docs/s torch {t['docs_per_s']:.1f}, onnx-int8 {o['docs_per_s']:.1f} "
            f"({o['docs_per_s'] / t['docs_per_s']:.2f}x); single query ms torch {t['query_ms']:.2f}, "
            f"onnx-int8 {o['query_ms']:.2f} ({t['query_ms'] / o['query_ms']:.2f}x lower); "
            f"load {t['load']:.1f}/{o['load']:.1f}; per CPU-second (process_time, spinning threads included): docs "
            f"{o['docs_per_cpu_s'] / t['docs_per_cpu_s']:.2f}x, query {t['query_cpu_ms'] / o['query_cpu_ms']:.2f}x",
            flush=True,
        )
    docs_ratio = statistics.median(r["onnx-int8"]["docs_per_s"] / r["torch"]["docs_per_s"] for r in rounds)
    query_ratio = statistics.median(r["torch"]["query_ms"] / r["onnx-int8"]["query_ms"] for r in rounds)
    for backend in backends:
        print(f"kernel path {backend}: {json.dumps(rounds[-1][backend]['kernel'])}")
    invariance = {
        b: child("--invariance-texts", str(args.invariance_texts), "--child", "invariance", b)
        for b in backends
    }
    for backend, inv in invariance.items():
        print(
            f"batch invariance {backend}: max |alone - batched| over {inv['texts']} texts: {inv['max_abs_diff']}"
        )
    checks = [
        (
            f"long texts docs/s >= {DOCS_TARGET:g}x torch (median of rounds)",
            docs_ratio >= DOCS_TARGET,
            docs_ratio,
        ),
        (
            f"single query >= {QUERY_TARGET:g}x lower latency (median)",
            query_ratio >= QUERY_TARGET,
            query_ratio,
        ),
        (
            "onnx-int8 bit-identical alone and batched",
            max(invariance["onnx-int8"]["max_abs_diff"].values()) == 0.0,
            max(invariance["onnx-int8"]["max_abs_diff"].values()),
        ),
    ]
    quality: dict[str, dict[str, float]] = {}
    if args.quality:
        for name in (s for s in args.sets.split(",") if s):
            quality[name] = {
                b: child("--cache-dir", args.cache_dir, "--child", "quality", b, name)["nDCG@10"]
                for b in backends
            }
            gap = quality[name]["onnx-int8"] - quality[name]["torch"]
            print(
                f"{name} nDCG@10: torch {quality[name]['torch']:.4f}, onnx-int8 {quality[name]['onnx-int8']:.4f}"
            )
            checks.append(
                (f"{name} |nDCG@10 - torch| <= {QUALITY_TOLERANCE}", abs(gap) <= QUALITY_TOLERANCE, gap)
            )
    ok = True
    for what, met, value in checks:
        print(f"target {what}: {'met' if met else 'MISSED'} ({value:.4g})")
        ok = ok and met
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        json.dumps({"rounds": rounds, "invariance": invariance, "quality": quality}, indent=2),
        encoding="utf-8",
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
