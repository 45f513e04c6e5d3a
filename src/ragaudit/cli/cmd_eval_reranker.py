"""``ragaudit eval-reranker``: before/after metrics of a pipeline's rerank stage with significance, the
oracle ceiling of its candidates, the first stage's recall, and the latency the reranker adds."""

from __future__ import annotations

import argparse

from ragaudit.cli.announce import pipeline_text, plan
from ragaudit.cli.argtypes import output_file, positive_float, positive_int, probability
from ragaudit.cli.common import (
    SEED_HELP,
    add_dataset_options,
    add_executor_options,
    add_policy_options,
    policy_from,
)
from ragaudit.cli.experiment_common import ALPHA_HELP, run_on_executor
from ragaudit.cli.outcome import add_outcome_options
from ragaudit.cli.results import pipelines_exit_code, print_result

HELP = "evaluate a reranker: before/after with significance, oracle ceiling, first-stage recall, latency"


EXAMPLES = """\
ragaudit eval-reranker --dataset golden.jsonl --corpus corpus.jsonl --pipeline hybrid-rerank:fusion.json
ragaudit eval-reranker --dataset golden.jsonl --corpus corpus.jsonl --pipeline my_rerank.toml --top-n 50
"""
JSON_OUT = True
"""``--out -`` writes the JSON report to standard output."""


def configure(parser: argparse.ArgumentParser) -> None:
    add_dataset_options(parser, corpus=True)
    parser.add_argument(
        "--pipeline",
        required=True,
        help="a pipeline with a rerank stage: hybrid-rerank:MODEL.json (ragaudit fit-fusion) or a TOML file with a [rerank] table",
    )
    parser.add_argument(
        "--top-n", type=positive_int, help="candidates the reranker reorders (default: the stage's top_n)"
    )
    parser.add_argument("--metrics", default="nDCG@5,MRR,nDCG@10", help="metrics before and after")
    parser.add_argument("--tenant", help="tenant for cases that name none")
    parser.add_argument(
        "--concurrency",
        type=positive_int,
        default=1,
        help="cases in flight (default 1: latencies do not overlap)",
    )
    parser.add_argument("--timeout", type=positive_float, default=30.0, help="per-query timeout in seconds")
    parser.add_argument("--alpha", type=probability, default=0.05, help=ALPHA_HELP)
    parser.add_argument(
        "--resamples",
        type=positive_int,
        default=10_000,
        help="randomization and bootstrap resamples (default 10000)",
    )
    parser.add_argument("--seed", type=int, default=0, help=SEED_HELP)
    parser.add_argument(
        "--out", type=output_file, help="write the JSON artifact here (- for standard output)"
    )
    parser.add_argument("--qdrant-url", help="use this Qdrant server or cluster as the dense store")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_policy_options(parser)
    add_outcome_options(parser)
    add_executor_options(parser)


def run(args: argparse.Namespace) -> int:
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.data.loading import load_dataset
    from ragaudit.experiments.reranker_eval import evaluate_reranker
    from ragaudit.metrics.names import parse_metrics
    from ragaudit.pipelines.config import resolve_pipeline

    policy = policy_from(args)
    specs = parse_metrics(args.metrics)
    config = resolve_pipeline(args.pipeline)
    dataset = load_dataset(args.dataset, args.dataset_format, args.split, policy.relevance_threshold)
    plan(
        "eval-reranker",
        ["pipeline " + pipeline_text(config)],
        dataset,
        policy.relevance_threshold,
        top_n=args.top_n,
        concurrency=args.concurrency,
        metrics=args.metrics,
    )
    result = run_on_executor(
        args,
        lambda executor: evaluate_reranker(
            dataset,
            load_corpus(args.corpus),
            config,
            specs,
            policy,
            top_n=args.top_n,
            default_tenant=args.tenant,
            concurrency=args.concurrency,
            timeout_s=args.timeout,
            progress=False if args.no_progress else None,
            alpha=args.alpha,
            resamples=args.resamples,
            seed=args.seed,
            qdrant_url=args.qdrant_url,
            executor=executor,
        ),
        f"eval-reranker: building {config.name} and querying {len(dataset.cases)} cases",
    )
    print_result(result, args.out)
    return pipelines_exit_code(args, [(result.after, f"pipeline {config.name}")])
