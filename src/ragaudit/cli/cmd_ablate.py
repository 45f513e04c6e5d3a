"""``ragaudit ablate``: the marginal gain of each pipeline component, remove-one and add-one, with
paired significance; the invariants (same cases, tenants, k) are checked and stated."""

from __future__ import annotations

import argparse
import asyncio

from ragaudit.cli.announce import pipeline_text, plan
from ragaudit.cli.argtypes import positive_int, probability
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
from ragaudit.cli.console import step

HELP = "ablation: what each component (rewrite, rerank, hybrid, bm25, dense) adds, with significance"


EXAMPLES = """\
ragaudit ablate --dataset golden.jsonl --corpus corpus.jsonl --config full.toml --toggle rewrite,rerank,hybrid
ragaudit ablate --dataset golden.jsonl --corpus corpus.jsonl --config hybrid --toggle bm25,dense
"""


def configure(parser: argparse.ArgumentParser) -> None:
    add_dataset_options(parser)
    parser.add_argument("--corpus", required=True, help="corpus JSONL or BEIR folder")
    parser.add_argument(
        "--config", required=True, help="the full pipeline: a TOML file or a preset (e.g. hybrid)"
    )
    parser.add_argument(
        "--toggle",
        action="append",
        default=[],
        metavar="NAME",
        help="a component to switch off and on: rewrite, rerank, hybrid, bm25, dense (repeatable or "
        "comma-separated; default: every rewrite/rerank/hybrid stage the config has)",
    )
    parser.add_argument(
        "--metrics",
        default="nDCG@10,R@5,R@10,MRR@10,P@5",
        help="comma-separated metric names (default %(default)s)",
    )
    add_experiment_run_options(parser)
    add_executor_options(parser)
    parser.add_argument("--context-k", type=positive_int, default=5, help="k for the context-token column")
    parser.add_argument("--alpha", type=probability, default=0.05, help="significance level (default 0.05)")
    parser.add_argument("--seed", type=int, default=0, help=SEED_HELP)
    parser.add_argument(
        "--out-dir", default="reports/ablation", help="where ablation.json and the variant reports go"
    )
    add_policy_options(parser)


def run(args: argparse.Namespace) -> int:
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.data.loading import load_dataset
    from ragaudit.experiments.ablation import applicable_toggles, run_ablation
    from ragaudit.metrics.names import parse_metrics
    from ragaudit.pipelines.config import resolve_pipeline

    policy = policy_from(args)
    specs = parse_metrics(args.metrics)
    base = resolve_pipeline(args.config)
    toggles = [t for raw in args.toggle for t in raw.split(",")] or list(applicable_toggles(base))
    dataset = load_dataset(args.dataset, args.dataset_format, args.split, policy.relevance_threshold)
    options = run_options_from(args, specs)
    plan(
        "ablate",
        ["base pipeline " + pipeline_text(base), "switching off and on: " + ", ".join(toggles)],
        dataset,
        policy.relevance_threshold,
        top_k=options.top_k,
        metrics=args.metrics,
    )
    with (
        executor_from(args) as executor,
        step(f"ablate: building the variants and querying {len(dataset.cases)} cases on each"),
    ):
        result = asyncio.run(
            run_ablation(
                dataset,
                load_corpus(args.corpus),
                base,
                toggles,
                specs,
                policy,
                options,
                context_k=args.context_k,
                alpha=args.alpha,
                resamples=args.resamples,
                seed=args.seed,
                report_dir=args.out_dir,
                qdrant_url=args.qdrant_url,
                where=args.config,
                executor=executor,
            )
        )
    from ragaudit.report.terminal import render_terminal

    print(render_terminal(result.to_dict()))
    print(f"written to {args.out_dir}/ablation.json (and one eval report per variant)")
    from ragaudit.cli.outcome import exit_code, result_outcome

    checks = [result_outcome(o.result, f"variant {name}", "pipeline") for name, o in result.outcomes.items()]
    return exit_code(checks, args.max_error_rate)
