"""``ragaudit sweep-chunking``: one pipeline over a grid of chunkings, scored against span evidence."""

from __future__ import annotations

import argparse

from ragaudit.cli.announce import chunking_text, pipeline_text
from ragaudit.cli.argtypes import positive_int
from ragaudit.cli.common import SEED_HELP, add_dataset_options, add_experiment_run_options, add_policy_options
from ragaudit.cli.experiment_common import (
    add_artifact_options,
    plan_experiment,
    run_on_executor,
    settings_from,
)
from ragaudit.cli.results import pipelines_exit_code, print_result

HELP = "sweep chunk strategies, sizes and overlaps; score each against evidence spans"


EXAMPLES = """\
ragaudit sweep-chunking --dataset golden.jsonl --corpus corpus.jsonl --sizes 128,256 --overlaps 0,32
ragaudit sweep-chunking --dataset golden.jsonl --corpus corpus.jsonl --strategies fixed,sentence \\
    --pipeline dense --out chunking.json
"""
JSON_OUT = True
"""``--out -`` writes the JSON report to standard output."""


def _ints(flag: str, text: str) -> list[int]:
    from ragaudit.errors import InputError

    try:
        values = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise InputError(
            flag, None, f"expected comma-separated integers, got {text!r}", "e.g. 128,256"
        ) from None
    if not values:
        raise InputError(flag, None, "no values given", "e.g. 128,256")
    return values


def configure(parser: argparse.ArgumentParser) -> None:
    add_dataset_options(parser, corpus=True)
    parser.add_argument(
        "--pipeline", default="bm25", help="a preset or pipeline TOML file; its chunking is replaced (bm25)"
    )
    parser.add_argument(
        "--strategies", default="fixed,sentence,recursive", help="fixed, sentence, recursive, whole"
    )
    parser.add_argument("--sizes", default="128,256,512,1024", help="chunk sizes in tokens")
    parser.add_argument(
        "--overlaps", default="0,64", help="overlaps in tokens (combinations >= size are skipped)"
    )
    parser.add_argument("--metrics", default="R@5,R@10,nDCG@10", help="the first one picks the best point")
    parser.add_argument(
        "--context-k", type=positive_int, default=5, help="k for the token-level precision / IoU (5)"
    )
    add_experiment_run_options(parser)
    parser.add_argument("--seed", type=int, default=0, help=SEED_HELP)
    add_artifact_options(parser, "reports/chunking-sweep.json", "each point's eval report")
    add_policy_options(parser)


def run(args: argparse.Namespace) -> int:
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.experiments.chunking_sweep import chunking_grid, load_span_dataset, sweep_chunking
    from ragaudit.pipelines.config import resolve_pipeline

    policy, specs, options = settings_from(args)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    grid, skipped = chunking_grid(
        strategies, _ints("--sizes", args.sizes), _ints("--overlaps", args.overlaps)
    )
    config = resolve_pipeline(args.pipeline)
    corpus = load_corpus(args.corpus)
    dataset = load_span_dataset(
        args.dataset, args.dataset_format, args.split, policy.relevance_threshold, corpus
    )
    what = [
        "pipeline " + pipeline_text(config) + " (its chunking is replaced by each point)",
        f"{len(grid)} chunkings: "
        + "; ".join(chunking_text(g).removeprefix("chunking ") for g in grid[:6])
        + (" ..." if len(grid) > 6 else ""),
    ]
    plan_experiment("sweep-chunking", what, dataset, args, options.top_k)
    result = run_on_executor(
        args,
        lambda executor: sweep_chunking(
            dataset,
            corpus,
            config,
            grid,
            specs,
            policy,
            options,
            context_k=args.context_k,
            skipped=skipped,
            resamples=args.resamples,
            seed=args.seed,
            qdrant_url=args.qdrant_url,
            report_dir=args.reports_dir,
            executor=executor,
        ),
        f"sweep-chunking: building and querying {len(grid)} chunkings",
    )
    print_result(result, args.out, written="chunking sweep written to")
    return pipelines_exit_code(args, [(p.result, f"chunking {p.name}") for p in result.points])
