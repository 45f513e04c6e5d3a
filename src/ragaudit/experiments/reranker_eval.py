"""Reranker evaluation: before vs after, the oracle ceiling, and the latency the reranker adds.

One run of the pipeline answers every question; no query is sent twice:

1. The pipeline without its rerank stage (the first stage, behind the rewrite stage if there is one)
   is wrapped in a timer, and the rerank stage goes back on top with ``top_n = N``. Every case asks
   for ``top_k = N``, so the reranker returns all N candidates, reordered, each carrying the
   ``first_stage_rank`` the rerank stage records.
2. *before* is the candidates in first-stage order (by ``first_stage_rank``), *after* the reranked
   order. Both lists hold the same N candidates, so every metric difference is the reranker's doing.
3. *ceiling* is an oracle reranker: the same candidates in the ideal order by the dataset's grades
   (grade descending, then relevant before not, then first-stage order; a repeated id goes last).
   Its nDCG@k is the best any reranker of these candidates can reach. The first stage's ``R@N``
   says how much of the relevant set a reranker gets to see at all.
4. Significance: :func:`~ragaudit.evaluation.compare.compare_reports` of *before* (baseline) and
   *after* (paired randomization test, bootstrap CI of the delta, Holm across the metrics).
5. Latency per case: the first stage's time (the timer) and what the rerank stage adds (the case's
   latency minus its first stage). One warm-up query runs first so model loading is not counted,
   and cases run one at a time by default so timings do not overlap. A reranker behind an embedding
   cache (the bi-encoder) measures cache lookups once its texts are cached; the artifact records the
   cache's hits and misses when the reranker has one.

``headroom captured = (after - before) / (ceiling - before)``: the share of what an oracle could
have gained that the reranker did gain (undefined when the ceiling equals before).
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from ragaudit.artifacts.envelope import envelope, utc_timestamp, write_artifact
from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.data.run import CaseRun, RankedItem, Run
from ragaudit.data.schema import Dataset, GoldenCase
from ragaudit.errors import InputError
from ragaudit.evaluation.compare import LoadedReport, compare_reports
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.evaluation.result import EvalResult, percentile
from ragaudit.metrics.names import MetricSpec, parse_metric
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.build import ComponentCache
from ragaudit.pipelines.config import PipelineConfig, StageConfig
from ragaudit.pipelines.distribute import prepare_distributed
from ragaudit.retrieval.protocol import RetrievedChunk, Retriever
from ragaudit.runner.execute import warm_up
from ragaudit.runner.executor import Executor, run_once

DEFAULT_TOP_N = 50
"""The rerank stage's own default ``top_n`` (``ragaudit.pipelines.stages.wrap_rerank``)."""


class StageTimer:
    """A retriever that delegates to ``base`` and records each search's milliseconds by (tenant, query).

    ``transparent``: it returns its base's results unchanged, so a stage that needs to know the
    first stage (the learned fusion stage) looks through it."""

    transparent = True

    def __init__(self, base: Retriever) -> None:
        self.base = base
        self.ms: dict[tuple[str, str], float] = {}

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        started = time.perf_counter()
        try:
            return await self.base.search(tenant_id=tenant_id, query=query, top_k=top_k)
        finally:
            self.ms[(tenant_id, query)] = (time.perf_counter() - started) * 1000.0


def first_stage_order(items: Sequence[RankedItem]) -> list[RankedItem]:
    """Reranked items back in first-stage order, by the ``first_stage_rank`` in their metadata."""

    def rank(pair: tuple[int, RankedItem]) -> tuple[float, int]:
        value = (pair[1].metadata or {}).get("first_stage_rank")
        return (float(value) if isinstance(value, int) else math.inf, pair[0])

    return [item for _, item in sorted(enumerate(items), key=rank)]


def oracle_order(
    items: Sequence[RankedItem], grades: Mapping[str, int], relevant: frozenset[str]
) -> list[RankedItem]:
    """The ideal order of ``items`` (given in first-stage order): grade descending, relevant first,
    then first-stage order; a repeated id goes to the end (under the policy it gains nothing)."""
    seen: set[str] = set()
    first: list[RankedItem] = []
    repeats: list[RankedItem] = []
    for item in items:
        (repeats if item.chunk_id in seen else first).append(item)
        seen.add(item.chunk_id)
    ranked = sorted(first, key=lambda it: (-grades.get(it.chunk_id, 0), it.chunk_id not in relevant))
    return ranked + repeats


def _reordered(run: Run, cases: Sequence[GoldenCase], threshold: int, name: str, oracle: bool) -> Run:
    by_id = {c.id: c for c in cases}
    out: dict[str, CaseRun] = {}
    for case_id, case_run in run.cases.items():
        items = first_stage_order(case_run.items)
        if oracle and case_id in by_id:
            golden = by_id[case_id]
            items = oracle_order(items, golden.grades(), golden.relevant_set(threshold))
        out[case_id] = replace(case_run, items=items)
    return Run(out, name=name, source=run.source)


def _summary(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {
        "p50": percentile(list(values), 50),
        "p95": percentile(list(values), 95),
        "mean": sum(values) / len(values),
    }


@dataclass
class RerankerEvaluation:
    """Before, after and oracle results over the same candidates, their comparison, and timings."""

    before: EvalResult
    after: EvalResult
    ceiling: EvalResult
    recall_at_n: EvalResult
    comparison: dict[str, Any]
    top_n: int
    reranker: str
    pipeline: dict[str, Any]
    first_stage_ms: dict[str, float]
    reranker_cache: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)
    created_at: str = field(default_factory=utc_timestamp)
    executor: dict[str, Any] | None = None
    """Where the evaluation ran (``--executor ray``: the cluster); ``None`` for a local run."""

    @property
    def recall_metric(self) -> str:
        return f"R@{self.top_n}"

    @property
    def first_stage_recall(self) -> float:
        return self.recall_at_n.metrics[self.recall_metric]

    def added_ms(self) -> dict[str, float]:
        """Per case: the reranked case's latency minus its first stage (never below 0)."""
        out: dict[str, float] = {}
        for case in self.after.per_case:
            first = self.first_stage_ms.get(case.id)
            if case.latency_ms is not None and first is not None and case.status != "error":
                out[case.id] = max(0.0, case.latency_ms - first)
        return out

    def latency(self) -> dict[str, Any]:
        added = self.added_ms()
        total = [c.latency_ms for c in self.after.per_case if c.id in added and c.latency_ms is not None]
        first = [self.first_stage_ms[c] for c in added]
        out: dict[str, Any] = {
            "cases": len(added),
            "first_stage": _summary(first),
            "reranked_total": _summary(total),
            "rerank_added": _summary(list(added.values())),
        }
        if self.reranker_cache is not None:
            out["reranker_cache"] = self.reranker_cache
        return out

    def summary(self) -> list[dict[str, Any]]:
        """Per metric: before, after, the paired comparison, the oracle ceiling and the headroom captured."""
        rows = []
        for c in self.comparison["comparisons"]:
            before, after = self.before.metrics[c["metric"]], self.after.metrics[c["metric"]]
            ceiling = self.ceiling.metrics[c["metric"]]
            headroom = ceiling - before
            rows.append(
                {
                    "metric": c["metric"],
                    "before": before,
                    "after": after,
                    "delta": c["delta"],
                    "ci": c["ci"],
                    "ci_level": c["ci_level"],
                    "p_value": c["p_value"],
                    "p_value_corrected": c["p_value_corrected"],
                    "significant": c["significant"],
                    "wins": c["wins"],
                    "ties": c["ties"],
                    "losses": c["losses"],
                    "ceiling": ceiling,
                    "headroom_captured": (after - before) / headroom if headroom > 1e-12 else None,
                }
            )
        return rows

    def per_case(self) -> list[dict[str, Any]]:
        added = self.added_ms()
        recall = {c.id: c.metrics.get(self.recall_metric) for c in self.recall_at_n.per_case}
        rows = []
        for b, a, o in zip(self.before.per_case, self.after.per_case, self.ceiling.per_case, strict=True):
            row: dict[str, Any] = {"id": a.id, "tenant_id": a.tenant_id, "status": a.status}
            if a.metrics:
                row.update(
                    before=b.metrics, after=a.metrics, ceiling=o.metrics, first_stage_recall=recall.get(a.id)
                )
            if a.error is not None:
                row["error"] = a.error
            if a.id in self.first_stage_ms:
                row["first_stage_ms"] = self.first_stage_ms[a.id]
            if a.id in added:
                row["rerank_added_ms"] = added[a.id]
            rows.append(row)
        return rows

    def to_dict(self) -> dict[str, Any]:
        return {
            **envelope(
                "reranker-eval",
                created_at=self.created_at,
                dataset=self.after.dataset,
                policy=self.after.policy.to_dict(),
                context={**self.pipeline, "retrieval": {"top_k": self.top_n}, "executor": self.executor},
            ),
            "dataset": self.after.dataset,
            "policy": self.after.policy.to_dict(),
            **self.pipeline,
            "reranker": self.reranker,
            "top_n": self.top_n,
            "first_stage_recall": {"metric": self.recall_metric, "value": self.first_stage_recall},
            "metrics": {
                "before": self.before.metrics,
                "after": self.after.metrics,
                "ceiling": self.ceiling.metrics,
            },
            "summary": self.summary(),
            "latency_ms": self.latency(),
            "counts": self.after.counts.__dict__,
            "comparisons": self.comparison["comparisons"],
            "alpha": self.comparison["alpha"],
            "correction": self.comparison["correction"],
            "n_resamples": self.comparison["n_resamples"],
            "seed": self.comparison["seed"],
            "notes": [*self.notes, *self.after.notes],
            "per_case": self.per_case(),
        }

    def write_json(self, path: str | Path) -> None:
        """The artifact as strict JSON (an undefined value, NaN, is written as ``null``)."""
        write_artifact(self.to_dict(), path)


def split_rerank(
    config: PipelineConfig, top_n: int | None, where: str = "--pipeline"
) -> tuple[PipelineConfig, StageConfig]:
    """``config`` without its rerank stage, and that stage with ``top_n`` set (``None`` keeps the
    stage's own); an :class:`InputError` when there is no rerank stage or ``top_n`` is not positive."""
    if config.rerank is None:
        raise InputError(
            where,
            None,
            f"the pipeline {config.name!r} has no rerank stage to evaluate",
            "use a pipeline with a [rerank] table, e.g. --pipeline hybrid-rerank:fusion.json (ragaudit fit-fusion)",
        )
    if top_n is not None and (isinstance(top_n, bool) or top_n <= 0):
        raise InputError("--top-n", None, f"must be a positive integer (got {top_n})", "e.g. --top-n 30")
    n = top_n if top_n is not None else int(config.rerank.params.get("top_n", DEFAULT_TOP_N))
    stage = replace(config.rerank, params=MappingProxyType({**dict(config.rerank.params), "top_n": n}))
    return replace(config, rerank=None), stage


def _cache_stats(retriever: object) -> dict[str, Any] | None:
    encoder = getattr(getattr(retriever, "reranker", None), "encoder", None)
    hits, misses = getattr(encoder, "hits", None), getattr(encoder, "misses", None)
    if isinstance(hits, int) and isinstance(misses, int):
        return {"hits": hits, "misses": misses}
    return None


def _in_sample(reranked: Retriever, dataset: Dataset, threshold: int) -> dict[str, Any] | None:
    """The ``in_sample`` section when the rerank stage was fitted (:mod:`ragaudit.artifacts.in_sample`)."""
    from ragaudit.artifacts.in_sample import fitted_cases, in_sample_section
    from ragaudit.pipelines.build import fitted_stages

    stages = fitted_stages(reranked)
    scored = fitted_cases(c for c in dataset.cases if c.is_answerable(threshold))
    return in_sample_section(stages, dataset.sha256, scored) if stages else None


async def evaluate_reranker(
    dataset: Dataset,
    corpus: Corpus | str,
    config: PipelineConfig,
    specs: tuple[MetricSpec, ...],
    policy: Policy,
    *,
    top_n: int | None = None,
    default_tenant: str | None = None,
    concurrency: int = 1,
    timeout_s: float | None = 30.0,
    progress: bool | None = None,
    alpha: float = 0.05,
    resamples: int = 10_000,
    seed: int = 0,
    cache: ComponentCache | None = None,
    qdrant_url: str | None = None,
    executor: Executor | None = None,
) -> RerankerEvaluation:
    """Run ``config`` (which must have a rerank stage) once over ``dataset`` and evaluate its reranker
    (see the module docstring). ``top_n`` overrides the stage's candidate count. A non-local
    ``executor`` embeds the corpus on its workers first and runs the evaluation as one task there."""
    from ragaudit.pipelines.prepare import prepare_pipeline
    from ragaudit.pipelines.stages import wrap_rerank
    from ragaudit.runner.execute import run_cases

    first, stage = split_rerank(config, top_n)
    if executor is not None and executor.name != "local":
        the_corpus = corpus if isinstance(corpus, Corpus) else load_corpus(corpus)
        remote = prepare_distributed([first], the_corpus, executor, cache, qdrant_url)
        job = functools.partial(
            evaluate_reranker,
            dataset,
            the_corpus,
            config,
            specs,
            policy,
            top_n=top_n,
            default_tenant=default_tenant,
            concurrency=concurrency,
            timeout_s=timeout_s,
            progress=progress,
            alpha=alpha,
            resamples=resamples,
            seed=seed,
            cache=remote.cache,
            qdrant_url=qdrant_url,
        )
        result = await run_once(executor, job)
        return replace(result, executor=remote.provenance)
    n = int(stage.params["top_n"])
    prepared = prepare_pipeline(
        dataset, corpus, first, threshold=policy.relevance_threshold, cache=cache, qdrant_url=qdrant_url
    )
    timer = StageTimer(prepared.pipeline.retriever)
    reranked, reranker_name = wrap_rerank(timer, stage)
    cases = prepared.dataset.cases
    await warm_up(reranked, cases, default_tenant, n)
    timer.ms.clear()
    cache_before = _cache_stats(reranked)
    run = await run_cases(
        reranked,
        cases,
        n,
        default_tenant=default_tenant,
        concurrency=concurrency,
        timeout_s=timeout_s,
        name=f"{config.name} (reranked)",
        progress=progress,
    )
    cache_after = _cache_stats(reranked)
    threshold = policy.relevance_threshold
    first_ms = {
        c.id: timer.ms[key]
        for c in cases
        if (key := (c.tenant_id or default_tenant or "", c.query)) in timer.ms and c.id in run.cases
    }
    context = {"retrieval": {"top_k": n, "concurrency": concurrency, "timeout_s": timeout_s}}
    after = evaluate(prepared.dataset, run, specs, policy, context)
    before_run = _reordered(run, cases, threshold, f"{config.name} (first stage)", oracle=False)
    before = evaluate(prepared.dataset, before_run, specs, policy, context)
    oracle_run = _reordered(run, cases, threshold, f"{config.name} (oracle)", oracle=True)
    ceiling = evaluate(prepared.dataset, oracle_run, specs, policy, context)
    recall = evaluate(prepared.dataset, before_run, (parse_metric(f"R@{n}"),), policy, context)
    comparison = compare_reports(
        [
            LoadedReport("before", "<before>", before.to_dict()),
            LoadedReport("after", "<after>", after.to_dict()),
        ],
        alpha=alpha,
        n_resamples=resamples,
        seed=seed,
    )
    notes = [
        f"{s.name} looks past the {n} reranked candidates; only they are ranked"
        for s in specs
        if s.k is not None and s.k > n
    ]
    stats = None
    if cache_before is not None and cache_after is not None:
        stats = {k: cache_after[k] - cache_before[k] for k in ("hits", "misses")}
        if stats["misses"] == 0:
            notes.append(
                "every text the reranker scored was already in its embedding cache: rerank latency "
                "is cache lookups, not model inference"
            )
    full = replace(first, rerank=stage)
    info = prepared.pipeline.info()
    info.update(name=config.name, config=full.to_dict(), config_sha256=full.sha256())
    info["models"] = {**info["models"], "reranker": reranker_name}
    pipeline = {**prepared.context(), "pipeline": info}
    in_sample = _in_sample(reranked, prepared.dataset, threshold)
    if in_sample is not None:  # the reranker was fitted on (some of) these cases
        pipeline["in_sample"] = in_sample
    return RerankerEvaluation(
        before, after, ceiling, recall, comparison, n, reranker_name, pipeline, first_ms, stats, notes
    )
