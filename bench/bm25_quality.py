"""BM25Retriever against bm25s run standalone: nDCG@10 (linear gain) and R@100 on the shared BEIR sets.

Both sides index the same whole documents (title, newline, text) with the same analysis (bm25s
tokenizer, bm25s English stopwords, Snowball English stemmer from PyStemmer) and bm25s's default
parameters (lucene, k1=1.5, b=0.75). The reference is the plain bm25s path from its README:
``bm25s.tokenize`` -> ``BM25().index`` -> ``BM25.retrieve(k=100)``. The target is agreement within
0.005 nDCG@10; the script exits 1 when a set misses it.

Differences that remain by design: ragaudit returns only documents that match a query term (bm25s
fills the top-k with zero-score documents in arbitrary order) and breaks score ties by document id
descending (bm25s's order among ties comes from ``argpartition``).

Run: ``.venv/bin/python bench/bm25_quality.py`` (``--root`` and ``--sets`` to choose data).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import bm25s
import Stemmer

from ragaudit.corpus.model import Document, whole_document_chunk
from ragaudit.data.beir import DEFAULT_TENANT, iter_beir_corpus, load_beir
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.metrics.policy import Policy
from ragaudit.retrieval.bm25 import BM25Retriever

DEFAULT_ROOT = Path(__file__).resolve().parents[2] / "shared" / "data" / "beir"
SETS = ("msmarco", "dbpedia", "business-reports")
METRICS = "nDCG@10,R@100"
DEPTH = 100
TARGET = 0.005


@dataclass(frozen=True)
class Row:
    name: str
    docs: int
    queries: int
    ours: dict[str, float]
    reference: dict[str, float]
    same_top10: int
    build_s: float
    query_ms: float
    ref_build_s: float
    ref_query_ms: float


def run_set(folder: Path) -> Row:
    raw = iter_beir_corpus(folder / "corpus.jsonl")
    docs = [
        Document(str(d["doc_id"]), DEFAULT_TENANT, str(d["text"]), str(d["title"]))  # BEIR has one tenant
        for d in raw
    ]
    dataset = load_beir(folder)
    queries = [c.query for c in dataset.cases]
    policy = Policy(gain="linear")

    retriever = BM25Retriever.from_chunks(whole_document_chunk(d) for d in docs)
    started = time.perf_counter()
    ours = retriever.search_many(DEFAULT_TENANT, queries, DEPTH)
    query_ms = (time.perf_counter() - started) * 1000 / len(queries)
    our_run = {c.id: [r["chunk_id"] for r in res] for c, res in zip(dataset.cases, ours, strict=True)}

    # The standalone reference: bm25s used directly, as its README does.
    started = time.perf_counter()
    stemmer = Stemmer.Stemmer("english")
    texts = [f"{d.title}\n{d.text}" if d.title else d.text for d in docs]
    reference = bm25s.BM25()
    reference.index(
        bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False
    )
    ref_build_s = time.perf_counter() - started
    started = time.perf_counter()
    query_tokens = bm25s.tokenize(queries, stopwords="en", stemmer=stemmer, show_progress=False)
    indices, _ = reference.retrieve(query_tokens, k=DEPTH, show_progress=False)
    ref_query_ms = (time.perf_counter() - started) * 1000 / len(queries)
    ref_run = {
        c.id: [docs[int(i)].doc_id for i in row] for c, row in zip(dataset.cases, indices, strict=True)
    }

    same = sum(1 for c in dataset.cases if our_run[c.id][:10] == ref_run[c.id][:10])
    return Row(
        folder.name,
        len(docs),
        len(dataset.cases),
        evaluate(dataset, our_run, METRICS, policy).metrics,
        evaluate(dataset, ref_run, METRICS, policy).metrics,
        same,
        retriever.build_seconds,
        query_ms,
        ref_build_s,
        ref_query_ms,
    )


def table(rows: list[Row]) -> str:
    lines = [
        "| set | docs | queries | nDCG@10 ragaudit | nDCG@10 bm25s | Δ | R@100 ragaudit | R@100 bm25s | Δ "
        "| same top-10 | build s (ragaudit / bm25s) | ms/query (ragaudit / bm25s) |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        n_ours, n_ref = r.ours["nDCG@10"], r.reference["nDCG@10"]
        r_ours, r_ref = r.ours["R@100"], r.reference["R@100"]
        lines.append(
            f"| {r.name} | {r.docs:,} | {r.queries} | {n_ours:.4f} | {n_ref:.4f} | {n_ours - n_ref:+.4f} "
            f"| {r_ours:.4f} | {r_ref:.4f} | {r_ours - r_ref:+.4f} | {r.same_top10}/{r.queries} "
            f"| {r.build_s:.2f} / {r.ref_build_s:.2f} | {r.query_ms:.2f} / {r.ref_query_ms:.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--root", type=Path, default=DEFAULT_ROOT, help="folder holding the BEIR sets")
    parser.add_argument("--sets", default=",".join(SETS), help="comma-separated set names")
    args = parser.parse_args(argv)
    rows: list[Row] = []
    for name in args.sets.split(","):
        folder = args.root / name.strip()
        if not (folder / "corpus.jsonl").is_file():
            print(f"skipped {name}: no {folder / 'corpus.jsonl'}", file=sys.stderr)
            continue
        rows.append(run_set(folder))
    if not rows:
        print(f"no BEIR set found under {args.root}", file=sys.stderr)
        return 0
    print(
        f"nDCG@10 with linear gain; depth {DEPTH}; bm25s {bm25s.__version__}; target |Δ nDCG@10| <= {TARGET}"
    )
    print(table(rows))
    missed = [r.name for r in rows if abs(r.ours["nDCG@10"] - r.reference["nDCG@10"]) > TARGET]
    if missed:
        print(f"target missed on: {', '.join(missed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
