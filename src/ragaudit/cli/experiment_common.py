"""What the experiment commands share (``bench``, ``ablate``, ``sweep-chunking``, ``eval-reranker``,
``eval-rewrite``): their metric, query and executor options, the settings read from them, the plan
they announce, and running the experiment on the executor ``--executor`` names. How they end (the
table, the report, the exit code): :mod:`ragaudit.cli.results`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from ragaudit.cli.argtypes import output_file, positive_int
from ragaudit.cli.common import add_experiment_run_options, executor_from, policy_from, run_options_from
from ragaudit.cli.console import step
from ragaudit.metrics.policy import Policy

if TYPE_CHECKING:
    from ragaudit.evaluation.live import RunOptions
    from ragaudit.metrics.names import MetricSpec
    from ragaudit.runner.executor import Executor

R = TypeVar("R")
BENCH_METRICS = "nDCG@10,R@5,R@10,MRR@10,P@5"
"""The metrics ``bench`` and ``ablate`` report by default."""
ALPHA_HELP = "significance level (default 0.05)"


def add_experiment_options(
    parser: argparse.ArgumentParser,
    metrics: str = BENCH_METRICS,
    *,
    concurrency: int = 8,
    concurrency_help: str = "",
    context_k: bool = False,
) -> None:
    """``--metrics`` (default ``metrics``), how the pipelines are queried and where the experiment runs
    (:func:`~ragaudit.cli.common.add_experiment_run_options`), and with ``context_k`` the
    ``--context-k`` of the context-token column."""
    parser.add_argument(
        "--metrics", default=metrics, help="comma-separated metric names (default %(default)s)"
    )
    add_experiment_run_options(parser, concurrency=concurrency, concurrency_help=concurrency_help)
    if context_k:
        parser.add_argument(
            "--context-k", type=positive_int, default=5, help="k for the context-token column"
        )


def add_artifact_options(parser: argparse.ArgumentParser, out: str, reports_dir: str) -> None:
    """``--out`` (the experiment's JSON artifact, default ``out``; ``-`` for standard output) and
    ``--reports-dir`` (also write the eval reports behind it; ``reports_dir`` says which)."""
    parser.add_argument(
        "--out", type=output_file, default=out, help="the JSON artifact (- for standard output)"
    )
    parser.add_argument("--reports-dir", help=f"also write {reports_dir} here")


class Settings(NamedTuple):
    """What an experiment's options ask for: the metric policy, the metrics, how to query."""

    policy: Policy
    specs: tuple[MetricSpec, ...]
    options: RunOptions


def settings_from(args: argparse.Namespace) -> Settings:
    """The :class:`Settings` of the policy options, ``--metrics`` and the query options."""
    from ragaudit.metrics.names import parse_metrics

    specs = parse_metrics(args.metrics)
    return Settings(policy_from(args), specs, run_options_from(args, specs))


def plan_experiment(
    command: str, what: list[str], dataset: Any, args: argparse.Namespace, top_k: int, **settings: Any
) -> None:
    """:func:`~ragaudit.cli.announce.plan` of an experiment: what it runs, on which cases of ``dataset``
    (at ``--relevance-threshold``), at ``top_k``, then ``settings``, then ``--metrics``."""
    from ragaudit.cli.announce import plan

    plan(command, what, dataset, args.relevance_threshold, top_k=top_k, **settings, metrics=args.metrics)


def run_on_executor(
    args: argparse.Namespace,
    experiment: Callable[[Executor], Coroutine[Any, Any, R]],
    announce: str | None = None,
) -> R:
    """``experiment(executor)`` run to its end on the executor of ``--executor`` (closed afterwards),
    announced on stderr as a :func:`~ragaudit.cli.console.step` when ``announce`` is given."""
    with executor_from(args) as executor, step(announce) if announce else contextlib.nullcontext():
        return asyncio.run(experiment(executor))
