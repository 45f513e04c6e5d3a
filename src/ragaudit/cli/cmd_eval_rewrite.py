"""``ragaudit eval-rewrite``: a pipeline without and with a query-rewrite stage, case by case.

The rewrite stage comes from ``--rewrite R.toml`` (a ``[rewrite]`` table: synonyms, rm3 or llm),
``--synonyms FILE``, ``--rm3``, or, when none is given, the ``[rewrite]`` table of the pipeline file.
"""

from __future__ import annotations

import argparse
import asyncio
from typing import Any

from ragaudit.cli.announce import pipeline_text, plan, stage_text
from ragaudit.cli.argtypes import non_negative_int, output_file, positive_int, probability, share
from ragaudit.cli.common import (
    SEED_HELP,
    add_dataset_options,
    add_executor_options,
    add_experiment_run_options,
    add_policy_options,
    executor_from,
    policy_from,
    run_options_from,
)
from ragaudit.cli.console import shown, step

HELP = "evaluate a query rewrite: entity/constraint loss per case, metric deltas with significance, latency"


EXAMPLES = """\
ragaudit eval-rewrite --dataset golden.jsonl --corpus corpus.jsonl --pipeline bm25 --rm3
ragaudit eval-rewrite --dataset golden.jsonl --corpus corpus.jsonl --pipeline bm25 --synonyms synonyms.txt
"""
JSON_OUT = True
"""``--out -`` writes the JSON report to standard output."""


def configure(parser: argparse.ArgumentParser) -> None:
    add_dataset_options(parser)
    parser.add_argument("--corpus", required=True, help="corpus JSONL or BEIR folder")
    parser.add_argument(
        "--pipeline",
        default="bm25",
        help="a preset (bm25, dense, hybrid, hybrid-rerank:MODEL.json) or a pipeline TOML file (default bm25)",
    )
    stage = parser.add_mutually_exclusive_group()
    stage.add_argument("--rewrite", metavar="R.toml", help="a TOML file with a [rewrite] table")
    stage.add_argument(
        "--synonyms", metavar="FILE", help="a synonym map (.json or .toml) for a synonym rewrite"
    )
    stage.add_argument("--rm3", action="store_true", help="RM3 pseudo relevance feedback")
    parser.add_argument("--fb-docs", type=positive_int, default=10, help="RM3 feedback chunks (default 10)")
    parser.add_argument("--fb-terms", type=positive_int, default=10, help="RM3 expansion terms (default 10)")
    parser.add_argument(
        "--original-weight", type=share, default=0.5, help="RM3 weight of the query, in [0, 1] (0.5)"
    )
    parser.add_argument(
        "--vocabulary",
        metavar="FILE",
        help="known entity names, one per line: 'Professional | Pro' (aliases count as the same entity)",
    )
    parser.add_argument(
        "--metrics",
        default="R@5,R@10,nDCG@10,MRR@10",
        help="comma-separated metric names (default %(default)s)",
    )
    add_experiment_run_options(
        parser, concurrency=1, concurrency_help="queries in flight (default 1: latency is timed alone)"
    )
    add_executor_options(parser)
    parser.add_argument("--seed", type=int, default=0, help=SEED_HELP)
    parser.add_argument("--alpha", type=probability, default=0.05, help="significance level (default 0.05)")
    parser.add_argument(
        "--out",
        type=output_file,
        default="reports/rewrite-eval.json",
        help="the JSON artifact (- for standard output)",
    )
    parser.add_argument("--reports-dir", help="also write baseline.json and rewrite.json eval reports here")
    parser.add_argument(
        "--show", type=non_negative_int, default=10, help="flagged cases to print (default 10)"
    )
    add_policy_options(parser)


def _stage(args: argparse.Namespace, pipeline_rewrite: Any) -> Any:
    from ragaudit.errors import InputError
    from ragaudit.experiments.rewrite_eval import load_rewrite_stage, rewrite_stage

    if args.rewrite:
        return load_rewrite_stage(args.rewrite)
    if args.synonyms:
        return rewrite_stage({"type": "synonyms", "mapping_file": args.synonyms}, "--synonyms")
    if args.rm3:
        raw = {
            "type": "rm3",
            "fb_docs": args.fb_docs,
            "fb_terms": args.fb_terms,
            "original_weight": args.original_weight,
        }
        return rewrite_stage(raw, "--rm3")
    if pipeline_rewrite is None:
        raise InputError(
            "--rewrite",
            None,
            "no rewrite stage to evaluate",
            "pass --rewrite R.toml, --synonyms FILE or --rm3, or a --pipeline file with a [rewrite] table",
        )
    return pipeline_rewrite


def run(args: argparse.Namespace) -> int:
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.data.loading import load_dataset
    from ragaudit.experiments.entities import load_vocabulary
    from ragaudit.experiments.rewrite_eval import evaluate_rewrite
    from ragaudit.metrics.names import parse_metrics
    from ragaudit.pipelines.config import resolve_pipeline

    policy = policy_from(args)
    specs = parse_metrics(args.metrics)
    config = resolve_pipeline(args.pipeline)
    stage = _stage(args, config.rewrite)
    vocabulary = load_vocabulary(args.vocabulary) if args.vocabulary else None
    dataset = load_dataset(args.dataset, args.dataset_format, args.split, policy.relevance_threshold)
    corpus = load_corpus(args.corpus)
    options = run_options_from(args, specs)
    plan(
        "eval-rewrite",
        ["pipeline " + pipeline_text(config), "rewrite " + stage_text(stage)],
        dataset,
        policy.relevance_threshold,
        top_k=options.top_k,
        metrics=args.metrics,
    )
    with (
        executor_from(args) as executor,
        step(f"eval-rewrite: querying {len(dataset.cases)} cases with and without the rewrite"),
    ):
        result = asyncio.run(
            evaluate_rewrite(
                dataset,
                corpus,
                config,
                stage,
                specs,
                policy,
                options,
                vocabulary=vocabulary,
                resamples=args.resamples,
                seed=args.seed,
                alpha=args.alpha,
                qdrant_url=args.qdrant_url,
                report_dir=args.reports_dir,
                executor=executor,
            )
        )
    from ragaudit.report.terminal import render_terminal

    print(render_terminal(result.to_dict(), limit=args.show))
    result.write_json(args.out)
    print(f"rewrite evaluation written to {shown(args.out)}")
    from ragaudit.cli.outcome import exit_code, result_outcome

    checks = [
        result_outcome(result.baseline, f"pipeline {config.name}", "pipeline"),
        result_outcome(result.rewritten, f"pipeline {config.name} + rewrite", "pipeline"),
    ]
    return exit_code(checks, args.max_error_rate)
