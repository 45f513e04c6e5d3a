"""``ragaudit bench``: several pipelines side by side on one corpus and golden set, with significance."""

from __future__ import annotations

import argparse

from ragaudit.cli.announce import pipeline_text
from ragaudit.cli.common import add_dataset_options, add_policy_options
from ragaudit.cli.experiment_common import (
    add_experiment_options,
    plan_experiment,
    run_on_executor,
    settings_from,
)
from ragaudit.cli.judged_options import add_holes_options, add_power_options
from ragaudit.cli.results import pipelines_exit_code
from ragaudit.cli.security_options import add_shared_tenant_option, shared_tenants

HELP = "benchmark pipelines side by side (quality, latency, build time, context tokens, significance)"


EXAMPLES = """\
ragaudit bench --dataset golden.jsonl --corpus corpus.jsonl --pipelines bm25,dense,hybrid --baseline bm25
ragaudit bench --dataset golden.jsonl --corpus corpus.jsonl --pipelines bm25,my_pipeline.toml --out-dir reports/b
"""


def configure(parser: argparse.ArgumentParser) -> None:
    add_dataset_options(parser, corpus=True)
    parser.add_argument(
        "--pipelines",
        default="bm25,dense,hybrid",
        help="comma-separated presets or pipeline TOML files",
    )
    parser.add_argument("--baseline", help="the pipeline to compare against (default: the first)")
    add_experiment_options(parser, context_k=True)
    parser.add_argument("--out-dir", default="reports/bench", help="where the per-pipeline reports go")
    parser.add_argument(
        "--latency",
        choices=("per-query", "batched"),
        default="per-query",
        help="per-query (default): one query at a time, each timed on its own; batched: --concurrency and "
        "the engines' batch fast path (faster; a case's latency is then its batch's time / its size)",
    )
    parser.add_argument("--no-history", action="store_true", help="do not record the runs in the run history")
    parser.add_argument(
        "--html",
        action="store_true",
        help="also write each pipeline's HTML page and report.html comparing them all into --out-dir "
        "(the page ragaudit demo ends with)",
    )
    add_shared_tenant_option(parser)
    add_policy_options(parser)
    add_holes_options(parser)
    add_power_options(parser)


def run(args: argparse.Namespace) -> int:
    from ragaudit.cli.judged_options import check_delta, holes_exit
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.data.loading import load_dataset
    from ragaudit.experiments.benchmark import run_benchmark
    from ragaudit.pipelines.config import resolve_pipeline

    check_delta(args.delta)
    from dataclasses import replace

    policy, specs, options = settings_from(args)
    options = replace(options, shared_tenants=shared_tenants(args))
    dataset = load_dataset(args.dataset, args.dataset_format, args.split, policy.relevance_threshold)
    corpus = load_corpus(args.corpus)
    given = [p.strip() for p in args.pipelines.split(",") if p.strip()]
    if not given:
        from ragaudit.errors import InputError

        raise InputError("--pipelines", None, "no pipeline given", "e.g. --pipelines bm25,dense")
    configs = [resolve_pipeline(p) for p in given]
    baseline = _baseline(args.baseline, given, [c.name for c in configs])
    what = ["pipeline " + pipeline_text(c) for c in configs]
    plan_experiment("bench", what, dataset, args, options.top_k, baseline=baseline or configs[0].name)
    result = run_on_executor(
        args,
        lambda executor: run_benchmark(
            dataset,
            corpus,
            configs,
            specs,
            policy,
            options,
            baseline=baseline,
            context_k=args.context_k,
            report_dir=args.out_dir,
            resamples=args.resamples,
            qdrant_url=args.qdrant_url,
            delta=args.delta,
            power=args.power,
            min_judged=args.min_judged,
            per_query_latency=args.latency == "per-query",
            executor=executor,
        ),
        announce=f"bench: building and querying {len(configs)} pipeline(s) (indexes, embeddings, then the cases)",
    )
    from ragaudit.report.terminal import render_terminal

    report = result.to_dict()
    print(render_terminal(report))
    print(f"reports written to {args.out_dir}/ (one per pipeline, plus benchmark.json)")
    if not getattr(args, "no_history", False):
        from ragaudit.artifacts.history import record_run

        for outcome in result.outcomes:
            print(record_run(outcome.result.to_dict()))
    if args.html:
        _write_pages(args.out_dir, {c.id: c.query for c in dataset.cases if c.query}, args.resamples)
    return max(
        pipelines_exit_code(args, [(o.result, f"pipeline {o.name}") for o in result.outcomes]),
        holes_exit(args, [p["holes"] for p in report["pipelines"]]),
    )


def _write_pages(out_dir: str, queries: dict[str, str], resamples: int) -> None:
    """Each pipeline's page and the comparison page, from the reports in ``out_dir``; its path printed last."""
    from pathlib import Path

    from ragaudit.report.bench_pages import write_bench_pages

    pages, page = write_bench_pages(out_dir, queries, resamples=resamples)
    print(f"pages per pipeline: {', '.join(str(Path(out_dir) / p) for p in pages.values())}")
    print(f"comparison of the pipelines (open this): {page.resolve()}")


def _baseline(wanted: str | None, given: list[str], names: list[str]) -> str | None:
    """The pipeline name ``--baseline`` means: one of ``--pipelines`` as written, or a pipeline's name;
    anything else is an error naming the choices (checked before any pipeline is built)."""
    from ragaudit.errors import InputError

    if wanted is None:
        return None
    if wanted in given:
        return names[given.index(wanted)]
    if wanted in names:
        return wanted
    choices = ", ".join(dict.fromkeys([*given, *names]))
    raise InputError(
        "--baseline", None, f"{wanted!r} is not one of --pipelines ({choices})", f"e.g. --baseline {given[0]}"
    )
