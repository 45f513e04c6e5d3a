"""``ragaudit demo``: the main job on the bundled multi-tenant knowledge base, end to end."""

from __future__ import annotations

import argparse

HELP = "run bm25 / dense / hybrid / hybrid-rerank on the bundled demo knowledge base"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out-dir", default="reports/demo", help="where the reports go (default reports/demo)"
    )
    parser.add_argument("--pipelines", default="bm25,dense,hybrid,hybrid-rerank")
    parser.add_argument("--no-progress", action="store_true")


def run(args: argparse.Namespace) -> int:
    from importlib.resources import files

    from ragaudit.cli import cmd_bench

    kb = files("ragaudit") / "demo_data" / "kb"
    print(f"demo knowledge base: {kb}")
    bench_args = argparse.Namespace(
        dataset=str(kb / "golden.jsonl"),
        dataset_format="jsonl",
        split="test",
        corpus=str(kb / "corpus.jsonl"),
        pipelines=args.pipelines,
        baseline=None,
        metrics="nDCG@10,R@5,R@10,MRR@10,P@5",
        top_k=None,
        context_k=5,
        tenant=None,
        concurrency=8,
        resamples=10_000,
        out_dir=args.out_dir,
        qdrant_url=None,
        no_progress=args.no_progress,
        gain="exponential",
        relevance_threshold=1,
    )
    return cmd_bench.run(bench_args)
