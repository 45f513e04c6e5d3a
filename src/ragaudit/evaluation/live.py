"""Evaluate a live retrieval source (a built pipeline, an HTTP service, a plugin) on a golden dataset.

The source is queried through the runner (bounded concurrency, timeouts, retries, an append-only
results file for ``--resume``, a progress bar), then scored exactly like a run file.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragaudit.data.schema import Dataset
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.evaluation.result import EvalResult
from ragaudit.metrics.names import MetricSpec
from ragaudit.metrics.policy import Policy
from ragaudit.retrieval.protocol import Retriever

if TYPE_CHECKING:
    from ragaudit.retry import RetryPolicy
    from ragaudit.runner.tenancy import ChunkOwnership


@dataclass(frozen=True)
class RunOptions:
    """How the runner queries a live source."""

    top_k: int = 100
    default_tenant: str | None = None
    concurrency: int = 8
    timeout_s: float | None = 30.0
    results_path: str | Path | None = None
    resume: bool = False
    progress: bool | None = None
    retry: RetryPolicy | None = None
    """Retries of transient failures (``None``: the runner's default policy)."""
    require_tenant_labels: bool = False
    """Count a returned chunk without a tenant label as a leak (when no ``ownership`` index decides)."""
    batch_size: int = 64
    """Queries per ``search_many`` call for engines that batch (1: every query on its own)."""
    shared_tenants: frozenset[str] = frozenset()
    """Tenants whose documents may be returned to every tenant (``--shared-tenant``): not leaks."""

    def timed_per_query(self) -> RunOptions:
        """These options with one query at a time, each timed on its own (latency per query, not a
        batch's time divided by its size, nor a request's time while others wait)."""
        return replace(self, concurrency=1, batch_size=1)


def retrieval_depth(specs: tuple[MetricSpec, ...], requested: int | None = None) -> int:
    """How many results to ask for: ``requested``, else the largest metric cut-off (100 if none)."""
    if requested is not None:
        if requested <= 0:
            raise ValueError(f"--top-k must be a positive integer (got {requested})")
        return requested
    cutoffs = [s.k for s in specs if s.k is not None]
    return max(cutoffs) if cutoffs else 100


def run_identity(dataset_sha256: str, context: Mapping[str, Any] | None, name: str = "") -> dict[str, str]:
    """What ran, as the results file's sidecar and the run history key it: the dataset's sha256, and the
    pipeline's config and corpus hashes (``context`` as :meth:`ragaudit.pipelines.sources.OpenedSource.provenance`
    gives it), or the endpoint / retriever / run file of another source, else the run's ``name``."""
    out = {"dataset_sha256": dataset_sha256}
    context = context or {}
    pipeline, corpus, source = (context.get(k) for k in ("pipeline", "corpus", "source"))
    if isinstance(pipeline, Mapping) and pipeline.get("config_sha256"):
        out["config_sha256"] = str(pipeline["config_sha256"])
        if isinstance(corpus, Mapping) and corpus.get("sha256"):
            out["corpus_sha256"] = str(corpus["sha256"])
    elif isinstance(source, Mapping) and source:
        out.update({str(k): str(v) for k, v in source.items()})
    elif name:
        out["name"] = name
    return out


async def evaluate_live(
    dataset: Dataset,
    retriever: Retriever,
    specs: tuple[MetricSpec, ...],
    policy: Policy,
    options: RunOptions,
    *,
    name: str,
    context: Mapping[str, Any] | None = None,
    ownership: ChunkOwnership | None = None,
) -> EvalResult:
    """Query ``retriever`` for every case and score the run. With ``ownership`` (an index over the
    corpus) each returned chunk's tenant is checked from the corpus by id and content; a response's
    ``tenant_id`` can only reveal a leak. The verdict is ``EvalResult.isolation``
    (:mod:`ragaudit.runner.tenancy`): golden questions asked by their own tenants never verify isolation."""
    from ragaudit.runner.execute import run_cases

    run = await run_cases(
        retriever,
        dataset.cases,
        options.top_k,
        default_tenant=options.default_tenant,
        concurrency=options.concurrency,
        timeout_s=options.timeout_s,
        name=name,
        results_path=options.results_path,
        resume=options.resume,
        progress=options.progress,
        retry=options.retry,
        require_tenant_labels=options.require_tenant_labels,
        batch_size=options.batch_size,
        ownership=ownership,
        identity=run_identity(dataset.sha256, context, name),
        shared_tenants=options.shared_tenants,
    )
    full_context = {
        "retrieval": {
            "top_k": options.top_k,
            "concurrency": options.concurrency,
            "timeout_s": options.timeout_s,
            "latency": run.latency_basis,
            **({"shared_tenants": sorted(options.shared_tenants)} if options.shared_tenants else {}),
        },
        **dict(context or {}),
    }
    return evaluate(dataset, run, specs, policy, full_context)
