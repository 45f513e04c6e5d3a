"""``ragaudit eval-rewrite``: a pipeline without and with a query-rewrite stage, case by case.

The rewrite stage comes from ``--rewrite R.toml`` (a ``[rewrite]`` table: synonyms, rm3 or llm),
``--synonyms FILE``, ``--rm3``, or, when none is given, the ``[rewrite]`` table of the pipeline file.
"""

from __future__ import annotations

import argparse
from typing import Any

from ragaudit.cli.announce import pipeline_text, stage_text
from ragaudit.cli.argtypes import non_negative_int, positive_int, probability, share
from ragaudit.cli.common import SEED_HELP, add_dataset_options, add_policy_options
from ragaudit.cli.experiment_common import (
    ALPHA_HELP,
    add_artifact_options,
    add_experiment_options,
    plan_experiment,
    run_on_executor,
    settings_from,
)
from ragaudit.cli.results import pipelines_exit_code, print_result

HELP = "evaluate a query rewrite: entity/constraint loss per case, metric deltas with significance, latency"


EXAMPLES = """\
ragaudit eval-rewrite --dataset golden.jsonl --corpus corpus.jsonl --pipeline bm25 --rm3
ragaudit eval-rewrite --dataset golden.jsonl --corpus corpus.jsonl --pipeline bm25 --synonyms synonyms.txt
"""
JSON_OUT = True
"""``--out -`` writes the JSON report to standard output."""


def configure(parser: argparse.ArgumentParser) -> None:
    add_dataset_options(parser, corpus=True)
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
    add_experiment_options(
        parser,
        "R@5,R@10,nDCG@10,MRR@10",
        concurrency=1,
        concurrency_help="queries in flight (default 1: latency is timed alone)",
    )
    parser.add_argument("--seed", type=int, default=0, help=SEED_HELP)
    parser.add_argument("--alpha", type=probability, default=0.05, help=ALPHA_HELP)
    add_artifact_options(parser, "reports/rewrite-eval.json", "baseline.json and rewrite.json eval reports")
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
    from ragaudit.pipelines.config import resolve_pipeline

    policy, specs, options = settings_from(args)
    config = resolve_pipeline(args.pipeline)
    stage = _stage(args, config.rewrite)
    vocabulary = load_vocabulary(args.vocabulary) if args.vocabulary else None
    dataset = load_dataset(args.dataset, args.dataset_format, args.split, policy.relevance_threshold)
    corpus = load_corpus(args.corpus)
    what = ["pipeline " + pipeline_text(config), "rewrite " + stage_text(stage)]
    plan_experiment("eval-rewrite", what, dataset, args, options.top_k)
    result = run_on_executor(
        args,
        lambda executor: evaluate_rewrite(
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
        ),
        f"eval-rewrite: querying {len(dataset.cases)} cases with and without the rewrite",
    )
    print_result(result, args.out, written="rewrite evaluation written to", limit=args.show)
    return pipelines_exit_code(
        args,
        [
            (result.baseline, f"pipeline {config.name}"),
            (result.rewritten, f"pipeline {config.name} + rewrite"),
        ],
    )
