"""``ragaudit context``: quality of the assembled context (top-k after dedupe and token budget) of a
pipeline, run file or eval report, plus how well the top retrieval score predicts answerability."""

from __future__ import annotations

import argparse
from typing import Any

from ragaudit.cli.announce import plan, source_text
from ragaudit.cli.argtypes import above_zero_share, input_file, output_file, positive_float, positive_int
from ragaudit.cli.common import RUN_FORMAT_HELP, add_dataset_options, add_policy_options, policy_from
from ragaudit.cli.console import shown, step
from ragaudit.cli.outcome import add_outcome_options

HELP = "context precision, evidence coverage, redundancy, staleness, token cost and abstention AUROC"


EXAMPLES = """\
ragaudit context --dataset golden.jsonl --corpus corpus.jsonl --pipeline hybrid
ragaudit context --dataset golden.jsonl --corpus corpus.jsonl --report hybrid.json --k 8 --token-budget 2000
"""
JSON_OUT = True
"""``--out -`` writes the JSON report to standard output."""


def add_source_options(parser: argparse.ArgumentParser) -> None:
    """Dataset, corpus and where the rankings come from (shared with ``check-answers``), and the exit
    rule's ``--max-error-rate``."""
    add_dataset_options(parser, corpus="corpus JSONL or BEIR folder (gives the chunk texts)")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument(
        "--pipeline", help="a preset (bm25, dense, hybrid, hybrid-rerank:MODEL.json) or a pipeline TOML"
    )
    source.add_argument("--run", type=input_file, help="TREC run file or JSONL run")
    source.add_argument("--report", type=input_file, help="an eval report (ragaudit eval --out)")
    parser.add_argument(
        "--run-format", choices=["auto", "trec", "jsonl"], default="auto", help=RUN_FORMAT_HELP
    )
    parser.add_argument(
        "--chunking",
        help="chunking the run/report ids refer to: whole (default) or STRATEGY[:SIZE[:OVERLAP]]; "
        "a report made from a pipeline records its own",
    )
    live = parser.add_argument_group("pipeline runs")
    live.add_argument(
        "--top-k", type=positive_int, default=100, help="results to request per query (default 100)"
    )
    live.add_argument("--tenant", help="tenant for cases that name none")
    live.add_argument("--concurrency", type=positive_int, default=8, help="queries in flight (default 8)")
    live.add_argument("--timeout", type=positive_float, default=30.0, help="per-request timeout in seconds")
    live.add_argument("--qdrant-url", help="use this Qdrant server as the dense store")
    add_policy_options(parser)
    add_outcome_options(parser)


def add_context_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("context assembly")
    group.add_argument("--k", type=positive_int, default=5, help="chunks in the context (default 5)")
    group.add_argument("--token-budget", type=positive_int, help="stop adding chunks past this many tokens")
    group.add_argument(
        "--tokenizer",
        default="auto",
        help="auto (tiktoken cl100k_base if cached offline, else regex), regex, or tiktoken[:ENCODING]",
    )
    group.add_argument(
        "--duplicate-threshold",
        type=above_zero_share,
        default=0.8,
        help="Jaccard of word 3-shingles at which two chunks are near-duplicates (default 0.8)",
    )


def load_source(args: argparse.Namespace, command: str = "context") -> Any:
    """The :class:`ragaudit.context.sources.RetrievalSource` the arguments name; ``command`` says what
    it runs first (:func:`ragaudit.cli.announce.plan`)."""
    import asyncio

    from ragaudit.context import sources
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.data.loading import load_dataset, load_run

    policy = policy_from(args)
    dataset = load_dataset(args.dataset, args.dataset_format, args.split, policy.relevance_threshold)
    corpus = load_corpus(args.corpus)
    plan(
        command,
        [source_text(args)],
        dataset,
        policy.relevance_threshold,
        top_k=args.top_k if args.pipeline else None,
        k=args.k,
        token_budget=args.token_budget,
    )
    if args.run:
        run = load_run(args.run, args.run_format)
        return sources.from_run(dataset, corpus, run, policy, args.chunking or "whole")
    if args.report:
        return sources.from_report(dataset, corpus, args.report, policy, args.chunking)
    from ragaudit.evaluation.live import RunOptions

    options = RunOptions(args.top_k, args.tenant, args.concurrency, args.timeout, progress=False)
    with step(f"{command}: building {args.pipeline} over {args.corpus} and retrieving {len(dataset)} cases"):
        return asyncio.run(
            sources.from_pipeline(dataset, corpus, args.pipeline, policy, options, args.qdrant_url)
        )


def context_options(args: argparse.Namespace) -> Any:
    """The :class:`ContextOptions` of the flags (their ranges are checked when they are parsed)."""
    from ragaudit.context.audit import ContextOptions

    return ContextOptions(args.k, args.token_budget, args.relevance_threshold, args.duplicate_threshold)


def configure(parser: argparse.ArgumentParser) -> None:
    add_source_options(parser)
    add_context_options(parser)
    parser.add_argument("--out", type=output_file, help="write the JSON report here (- for standard output)")


def retrieval_outcome(args: argparse.Namespace, source: Any) -> Any:
    """The exit rule's view of the rankings (:mod:`ragaudit.cli.outcome`): a pipeline run, a run file or
    an eval report, each case failed or scored."""
    from ragaudit.cli.outcome import report_outcome

    if args.run:
        return report_outcome(source.report, f"--run {args.run}", "run")
    if args.report:
        return report_outcome(source.report, f"--report {args.report}", "report")
    return report_outcome(source.report, f"--pipeline {args.pipeline}", "pipeline")


def run(args: argparse.Namespace) -> int:
    from ragaudit.artifacts.envelope import write_artifact
    from ragaudit.context.audit import add_context_quality, build_contexts
    from ragaudit.context.tokens import token_counter
    from ragaudit.report.terminal import render_terminal

    counter = token_counter(args.tokenizer)
    options = context_options(args)
    source = load_source(args)
    with step(f"context: assembling and scoring {len(source.dataset.cases)} contexts"):
        contexts = build_contexts(source, counter, options)
        add_context_quality(source, contexts, counter, options)
    print(render_terminal(source.report))
    if args.out:
        write_artifact(source.report, args.out)
        print(f"report written to {shown(args.out)}")
    from ragaudit.cli.outcome import exit_code

    return exit_code([retrieval_outcome(args, source)], args.max_error_rate)
