"""``evaluate_retriever``: the Python entry point of the live path, a thin wrapper of
:func:`ragaudit.evaluation.live.evaluate_live` with the CLI's defaults (``ragaudit eval --endpoint/--retriever``).

Unanswerable cases do not crash it, queries run concurrently (bounded), failures are recorded per case,
and it returns the typed :class:`EvalResult`. It fails loudly, as the CLI does: a retriever that does not
satisfy the protocol is an :class:`~ragaudit.errors.InputError` before any query, and a run whose failed
cases exceed ``max_error_rate`` (default 0) raises :class:`~ragaudit.errors.RunFailedError` (the
result, every case marked, is its ``result``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragaudit.data.loading import load_dataset
from ragaudit.data.schema import Dataset
from ragaudit.evaluation.live import RunOptions, evaluate_live, retrieval_depth
from ragaudit.evaluation.result import EvalResult
from ragaudit.metrics.names import DEFAULT_METRICS, MetricSpec, parse_metrics
from ragaudit.metrics.policy import Policy
from ragaudit.retrieval.protocol import Retriever, check_retriever

if TYPE_CHECKING:
    from ragaudit.retry import RetryPolicy
    from ragaudit.runner.tenancy import ChunkOwnership


async def evaluate_retriever(
    retriever: Retriever,
    dataset_path: str | Path | Dataset,
    tenant_id: str | None = None,
    top_k: int | None = None,
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
    ownership: ChunkOwnership | None = None,
    name: str | None = None,
    max_error_rate: float | None = 0.0,
    context: Mapping[str, Any] | None = None,
) -> EvalResult:
    """Run every case through ``retriever`` and score it, exactly as ``ragaudit eval`` does for a live source.

    Defaults are the CLI's: the metrics are :data:`ragaudit.metrics.names.DEFAULT_METRICS`
    (``nDCG@10,R@5,R@10,R@100,P@5,MRR@10,MAP@100,Hit@5``) and ``top_k`` (results asked per query) is
    the largest metric cut-off (:func:`ragaudit.evaluation.live.retrieval_depth`). ``tenant_id`` is the
    tenant for cases that name none; a case's own ``tenant_id`` wins. The runner options (retries, an
    append-only ``results_path`` to ``resume`` from, a progress bar, counting unlabelled chunks as leaks,
    an ``ownership`` index over the corpus that decides who owns each chunk) are those of
    :func:`ragaudit.runner.execute.run_cases`; the tenant-isolation verdict is ``result.isolation``.
    The run is named ``name`` (default: the retriever's class name); ``context`` is the provenance the
    report records beside it (a built pipeline's config and corpus, as ``ragaudit eval`` records them).

    Like ``ragaudit eval``: a ``retriever`` without ``async def search(*, tenant_id, query, top_k)``
    raises :class:`~ragaudit.errors.InputError` before anything runs; when more cases failed than
    ``max_error_rate`` allows (default 0: any), or none could be scored, it raises
    :class:`~ragaudit.errors.RunFailedError` (its ``result`` holds every case). ``max_error_rate=None``
    returns the result whatever failed (``result.raise_for_errors()`` applies the rule later).
    """
    check_retriever(retriever)
    policy = policy or Policy()
    dataset = (
        dataset_path
        if isinstance(dataset_path, Dataset)
        else load_dataset(dataset_path, threshold=policy.relevance_threshold)
    )
    if metrics is None:
        specs = DEFAULT_METRICS
    else:
        specs = parse_metrics(metrics) if isinstance(metrics, str) else tuple(metrics)
    options = RunOptions(
        retrieval_depth(specs, top_k),
        tenant_id,
        concurrency,
        timeout_s,
        results_path,
        resume,
        progress,
        retry,
        require_tenant_labels,
    )
    result = await evaluate_live(
        dataset,
        retriever,
        specs,
        policy,
        options,
        name=name or type(retriever).__name__,
        context=context,
        ownership=ownership,
    )
    return result if max_error_rate is None else result.raise_for_errors(max_error_rate)
