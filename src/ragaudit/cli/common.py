"""Options shared by several commands."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ragaudit.cli.argtypes import input_file, non_negative_int, positive_float, positive_int
from ragaudit.cli.outcome import add_outcome_options
from ragaudit.errors import InputError
from ragaudit.metrics.policy import Policy

if TYPE_CHECKING:
    from ragaudit.evaluation.live import RunOptions
    from ragaudit.metrics.names import MetricSpec
    from ragaudit.pipelines.sources import SourceSpec
    from ragaudit.runner.executor import Executor

CORPUS_HELP = "corpus JSONL or BEIR folder"
DATASET_FORMATS = ["auto", "jsonl", "beir", "qrels"]
SPLIT_HELP = "BEIR qrels split (default test)"


def add_policy_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--gain",
        choices=["exponential", "linear"],
        default="exponential",
        help="nDCG gain: exponential 2^rel-1 (default) or linear rel (trec_eval / BEIR)",
    )
    parser.add_argument(
        "--relevance-threshold",
        type=positive_int,
        default=1,
        metavar="GRADE",
        help="where only grades are given, relevant means grade >= GRADE (default 1)",
    )


def policy_from(args: argparse.Namespace) -> Policy:
    return Policy(gain=args.gain, relevance_threshold=args.relevance_threshold)


def add_format_and_split(
    parser: argparse.ArgumentParser, format_help: str | None = None, split_help: str = SPLIT_HELP
) -> None:
    """``--dataset-format`` (default: detected) and ``--split`` (a BEIR folder's qrels split)."""
    parser.add_argument(
        "--dataset-format",
        choices=DATASET_FORMATS,
        default="auto",
        help=format_help or DATASET_FORMAT_HELP,
    )
    parser.add_argument("--split", default="test", help=split_help)


def add_dataset_options(parser: argparse.ArgumentParser, corpus: bool | str = False) -> None:
    """The golden set (``--dataset``, its format and split) and, with ``corpus``, the required
    ``--corpus`` (``corpus`` is its help when a string)."""
    parser.add_argument("--dataset", required=True, help="golden JSONL, BEIR folder or TREC qrels file")
    add_format_and_split(parser, "format of --dataset (default: detected)")
    if corpus:
        parser.add_argument(
            "--corpus", required=True, help=corpus if isinstance(corpus, str) else CORPUS_HELP
        )


RETRIEVER_HELP = (
    "a Python retriever: module:factory; or a LangChain / LlamaIndex / Haystack one: "
    "langchain:module:attribute, llamaindex:..., haystack:... (docs/integrations.md)"
)


def add_source_options(
    parser: argparse.ArgumentParser, *, many_pipelines: bool = False, with_run: bool = False
) -> None:
    """The retrieval source (``--pipeline`` / ``--endpoint`` / ``--retriever``, plus ``--run`` and
    ``--config`` with ``with_run``), how it is queried, and the HTTP endpoint's options."""
    pipeline_help = (
        "a preset (bm25, dense, hybrid, hybrid-rerank:MODEL.json) or a pipeline TOML, built over --corpus"
    )
    if many_pipelines:
        parser.add_argument("--pipeline", action="append", default=[], help=pipeline_help + " (repeatable)")
        parser.add_argument("--endpoint", help="URL of a retrieval service: POST {tenant_id, query, top_k}")
        parser.add_argument("--retriever", help=RETRIEVER_HELP)
    else:
        source = parser.add_mutually_exclusive_group(required=True)
        if with_run:
            source.add_argument("--run", type=input_file, help="TREC run file or JSONL run")
        source.add_argument("--pipeline", help=pipeline_help)
        if with_run:
            source.add_argument(
                "--config", type=input_file, help="a pipeline TOML file (same as --pipeline FILE)"
            )
        source.add_argument("--endpoint", help="URL of a retrieval service: POST {tenant_id, query, top_k}")
        source.add_argument("--retriever", help=RETRIEVER_HELP)
    parser.add_argument("--concurrency", type=positive_int, default=8, help="requests in flight (default 8)")
    parser.add_argument(
        "--timeout", type=positive_float, default=30.0, help="per-request timeout in seconds (default 30)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument(
        "--qdrant-url", help="use this Qdrant server or cluster as the dense store of --pipeline"
    )
    parser.add_argument(
        "--tenant-key",
        help="with a langchain:/llamaindex:/haystack: --retriever: the metadata key its tenant filter "
        "names (default tenant_id; docs/integrations.md)",
    )
    http = parser.add_argument_group("HTTP endpoint")
    http.add_argument(
        "--auth-env", help="name of the env var holding the auth token (never written anywhere)"
    )
    http.add_argument(
        "--endpoint-keys",
        type=input_file,
        help=(
            "TOML [tenants] acme = KEY: each tenant's requests carry its own key (ragaudit serve); "
            "audit-tenants then also sends one tenant's key naming another tenant, and forged tokens "
            "when the keys are JWTs naming their tenant (docs/security.md, Request mutations)"
        ),
    )
    http.add_argument(
        "--field",
        action="append",
        default=[],
        metavar="OURS=THEIRS",
        help="map a response field, e.g. chunk_id=id (repeatable)",
    )
    http.add_argument("--results-field", help="where the result list is in the response, e.g. data.hits")


def field_map_from(pairs: list[str]) -> dict[str, str]:
    """``["chunk_id=id", ...]`` as a field map; a malformed pair is an error saying the form."""
    out: dict[str, str] = {}
    for pair in pairs:
        ours, eq, theirs = pair.partition("=")
        if not eq or not ours or not theirs:
            raise InputError(
                "--field", None, f"expected OURS=THEIRS, got {pair!r}", "e.g. --field chunk_id=id"
            )
        out[ours] = theirs
    return out


def check_positive(name: str, value: float | None, *, allow_none: bool = False) -> None:
    if value is None and allow_none:
        return
    if value is None or value <= 0:
        raise InputError(name, None, f"must be a positive number (got {value})", f"e.g. {name} 8")


def check_share(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise InputError(name, None, f"must be a share within [0, 1] (got {value})", f"e.g. {name} 0.01")


def add_experiment_run_options(
    parser: argparse.ArgumentParser, *, concurrency: int = 8, concurrency_help: str = ""
) -> None:
    """How an experiment queries its pipelines: depth, tenant, concurrency, timeout, resamples, Qdrant,
    progress, ``--max-error-rate`` with the exit rule (:mod:`ragaudit.cli.outcome`), and where it runs
    (:func:`add_executor_options`)."""
    parser.add_argument(
        "--top-k", type=positive_int, help="results per query (default: largest metric cut-off)"
    )
    parser.add_argument("--tenant", help="tenant for cases that name none")
    parser.add_argument(
        "--concurrency",
        type=positive_int,
        default=concurrency,
        help=concurrency_help or f"queries in flight per pipeline (default {concurrency})",
    )
    parser.add_argument("--timeout", type=positive_float, default=30.0, help="per-query timeout in seconds")
    parser.add_argument(
        "--resamples", type=positive_int, default=10_000, help="randomization and bootstrap resamples"
    )
    parser.add_argument("--qdrant-url", help="use this Qdrant server or cluster as the dense store")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    add_outcome_options(parser)
    add_executor_options(parser)


def run_options_from(args: argparse.Namespace, specs: tuple[MetricSpec, ...]) -> RunOptions:
    """The :class:`RunOptions` of :func:`add_experiment_run_options`' flags."""
    from ragaudit.evaluation.live import RunOptions, retrieval_depth

    return RunOptions(
        retrieval_depth(specs, args.top_k),
        args.tenant,
        args.concurrency,
        args.timeout,
        progress=False if args.no_progress else None,
    )


def source_spec_from(args: argparse.Namespace, **overrides: Any) -> SourceSpec:
    """The :class:`~ragaudit.pipelines.sources.SourceSpec` of the source options
    (``--pipeline/--config/--endpoint/--retriever/--run``, ``--field``, ``--results-field``,
    ``--auth-env``, ``--timeout``, ``--concurrency``, ``--qdrant-url``); ``overrides`` win."""
    from ragaudit.pipelines.sources import SourceSpec

    pipeline = getattr(args, "pipeline", None) or getattr(args, "config", None)
    run = getattr(args, "run", None)
    values: dict[str, Any] = {
        "pipeline": pipeline if isinstance(pipeline, str) else None,
        "endpoint": getattr(args, "endpoint", None),
        "retriever": getattr(args, "retriever", None),
        "run": run if isinstance(run, str) else None,
        "run_format": getattr(args, "run_format", "auto"),
        "field_map": field_map_from(getattr(args, "field", None) or []) or None,
        "results_field": getattr(args, "results_field", None),
        "auth_env": getattr(args, "auth_env", None),
        "endpoint_keys": getattr(args, "endpoint_keys", None),
        "timeout_s": getattr(args, "timeout", None) or 30.0,
        "concurrency": getattr(args, "concurrency", None) or 8,
        "qdrant_url": getattr(args, "qdrant_url", None),
        "tenant_key": getattr(args, "tenant_key", None),
    }
    values.update(overrides)
    return SourceSpec(**values)


SEED_HELP = "random seed of the randomization test and bootstrap (default 0: the same figures every run)"
RUN_FORMAT_HELP = "format of --run: trec (6 columns) or jsonl (default: detected from the content)"
DATASET_FORMAT_HELP = "format of the dataset: jsonl, beir (a folder) or qrels (default: detected)"


def add_executor_options(parser: argparse.ArgumentParser) -> None:
    """``--executor local|ray`` and the Ray executor's settings (docs/scale.md)."""
    parser.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="where the cells run: in this process (local, default) or as Ray tasks (ray; needs "
        "pip install 'ragaudit[ray]')",
    )
    parser.add_argument(
        "--ray-address",
        help="the Ray cluster, by ray.init()'s own rules: unset = $RAY_ADDRESS, else the cluster last "
        "started on this machine, else a new local instance; 'auto' (an existing cluster or an error); "
        "'ray://host:port' (Ray Client)",
    )
    parser.add_argument(
        "--embed-actors",
        type=positive_int,
        help="Ray Data actors embedding the corpus (default: the cluster's CPUs / --actor-cpus; one model "
        "load each)",
    )
    parser.add_argument(
        "--actor-cpus",
        type=positive_int,
        default=1,
        help="CPUs per embedding actor, also its ONNX Runtime threads (default 1)",
    )
    parser.add_argument(
        "--task-retries",
        type=non_negative_int,
        default=3,
        help="Ray retries of a cell task whose worker is lost (default 3)",
    )


@contextmanager
def executor_from(args: argparse.Namespace) -> Iterator[Executor]:
    """The executor :func:`add_executor_options` asked for, closed (Ray disconnected) afterwards."""
    from ragaudit.runner.executor import make_executor

    executor = make_executor(
        args.executor,
        address=args.ray_address,
        embed_actors=args.embed_actors,
        actor_cpus=args.actor_cpus,
        task_retries=args.task_retries,
    )
    try:
        yield executor
    finally:
        executor.close()
