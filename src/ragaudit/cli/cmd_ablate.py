"""``ragaudit ablate``: the marginal gain of each pipeline component, remove-one and add-one, with
paired significance; the invariants (same cases, tenants, k) are checked and stated."""

from __future__ import annotations

import argparse

from ragaudit.cli.announce import pipeline_text
from ragaudit.cli.argtypes import probability
from ragaudit.cli.common import SEED_HELP, add_dataset_options, add_policy_options
from ragaudit.cli.experiment_common import (
    ALPHA_HELP,
    add_experiment_options,
    plan_experiment,
    run_on_executor,
    settings_from,
)
from ragaudit.cli.results import pipelines_exit_code

HELP = "ablation: what each component (rewrite, rerank, hybrid, bm25, dense) adds, with significance"


EXAMPLES = """\
ragaudit ablate --dataset golden.jsonl --corpus corpus.jsonl --config full.toml --toggle rewrite,rerank,hybrid
ragaudit ablate --dataset golden.jsonl --corpus corpus.jsonl --config hybrid --toggle bm25,dense
"""


def configure(parser: argparse.ArgumentParser) -> None:
    add_dataset_options(parser, corpus=True)
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
    add_experiment_options(parser, context_k=True)
    parser.add_argument("--alpha", type=probability, default=0.05, help=ALPHA_HELP)
    parser.add_argument("--seed", type=int, default=0, help=SEED_HELP)
    parser.add_argument(
        "--out-dir", default="reports/ablation", help="where ablation.json and the variant reports go"
    )
    add_policy_options(parser)


def run(args: argparse.Namespace) -> int:
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.data.loading import load_dataset
    from ragaudit.experiments.ablation import applicable_toggles, run_ablation
    from ragaudit.pipelines.config import resolve_pipeline

    policy, specs, options = settings_from(args)
    base = resolve_pipeline(args.config)
    toggles = [t for raw in args.toggle for t in raw.split(",")] or list(applicable_toggles(base))
    dataset = load_dataset(args.dataset, args.dataset_format, args.split, policy.relevance_threshold)
    what = ["base pipeline " + pipeline_text(base), "switching off and on: " + ", ".join(toggles)]
    plan_experiment("ablate", what, dataset, args, options.top_k)
    result = run_on_executor(
        args,
        lambda executor: run_ablation(
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
        ),
        f"ablate: building the variants and querying {len(dataset.cases)} cases on each",
    )
    from ragaudit.report.terminal import render_terminal

    print(render_terminal(result.to_dict()))
    print(f"written to {args.out_dir}/ablation.json (and one eval report per variant)")
    return pipelines_exit_code(args, [(o.result, f"variant {name}") for name, o in result.outcomes.items()])
