"""The lesson's ``evaluate_retriever``, fixed: unanswerable cases no longer crash it, queries run
concurrently (bounded), failures are recorded per case, and it returns the typed :class:`EvalResult`."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ragaudit.data.loading import load_dataset
from ragaudit.data.schema import Dataset
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.evaluation.result import EvalResult
from ragaudit.metrics.names import MetricSpec, parse_metrics
from ragaudit.metrics.policy import Policy
from ragaudit.retrieval.protocol import Retriever
from ragaudit.runner.execute import run_cases
from ragaudit.runner.retry import RetryPolicy

if TYPE_CHECKING:
    from ragaudit.security.ownership import OwnershipIndex


async def evaluate_retriever(
    retriever: Retriever,
    dataset_path: str | Path | Dataset,
    tenant_id: str | None = None,
    top_k: int = 5,
    *,
    metrics: Iterable[MetricSpec] | str | None = None,
    policy: Policy | None = None,
    concurrency: int = 8,
    timeout_s: float | None = 30.0,
    retry: RetryPolicy | None = None,
    results_path: str | Path | None = None,
    resume: bool = False,
    progress: bool | None = False,
    require_tenant_labels: bool = False,
    ownership: OwnershipIndex | None = None,
) -> EvalResult:
    """Run every case through ``retriever`` and score it.

    ``tenant_id`` is the tenant for cases that name none; a case's own ``tenant_id`` wins. The default
    metrics are the lesson's at ``top_k``: ``R@k``, ``P@k``, ``MRR`` and ``nDCG@k``. The runner options
    (retries, an append-only ``results_path`` to ``resume`` from, a progress bar, counting unlabelled
    chunks as leaks, an ``ownership`` index over the corpus that decides who owns each chunk) are those
    of :func:`ragaudit.runner.execute.run_cases`; the tenant-isolation verdict is ``result.isolation``.
    """
    policy = policy or Policy()
    dataset = (
        dataset_path
        if isinstance(dataset_path, Dataset)
        else load_dataset(dataset_path, threshold=policy.relevance_threshold)
    )
    specs = (
        parse_metrics(metrics or f"R@{top_k},P@{top_k},MRR,nDCG@{top_k}")
        if (metrics is None or isinstance(metrics, str))
        else tuple(metrics)
    )
    run = await run_cases(
        retriever,
        dataset.cases,
        top_k,
        default_tenant=tenant_id,
        concurrency=concurrency,
        timeout_s=timeout_s,
        name=type(retriever).__name__,
        retry=retry,
        results_path=results_path,
        resume=resume,
        progress=progress,
        require_tenant_labels=require_tenant_labels,
        ownership=ownership,
    )
    return evaluate(dataset, run, specs, policy)
