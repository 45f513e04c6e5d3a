"""Strategy benchmark: several pipelines over one corpus and golden set, side by side, with paired
significance against a baseline.

Invariants (the lesson's): every pipeline sees the same cases, the same tenants and the same k; the
result says so. Indexes shared between pipelines (BM25 under ``bm25`` and ``hybrid``) are built once,
but each pipeline's build time counts every index it uses.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragaudit.artifacts.envelope import envelope, write_artifact
from ragaudit.corpus.chunkers import count_tokens
from ragaudit.corpus.loading import Corpus
from ragaudit.data.run import Run
from ragaudit.data.schema import Dataset
from ragaudit.evaluation.compare import DEFAULT_DELTA, DEFAULT_POWER, LoadedReport, compare_reports
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.evaluation.holes import DEFAULT_MIN_JUDGED
from ragaudit.evaluation.live import RunOptions
from ragaudit.evaluation.result import EvalResult
from ragaudit.metrics.names import MetricSpec
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.build import ComponentCache
from ragaudit.pipelines.config import PipelineConfig
from ragaudit.pipelines.distribute import prepare_distributed
from ragaudit.pipelines.prepare import prepare_pipeline
from ragaudit.runner.executor import Executor, LocalExecutor


def context_tokens(run: Run, k: int) -> float:
    """Mean number of tokens in the top-k retrieved contents over answered cases (``count_tokens``)."""
    sizes = [
        sum(count_tokens(item.content or "") for item in case.items[:k])
        for case in run.cases.values()
        if case.error is None
    ]
    return sum(sizes) / len(sizes) if sizes else math.nan


@dataclass
class PipelineOutcome:
    name: str
    result: EvalResult
    build_seconds: float
    context_tokens: float


@dataclass
class BenchmarkResult:
    outcomes: list[PipelineOutcome]
    baseline: str
    comparison: dict[str, Any]
    context_k: int
    invariants: dict[str, Any] = field(default_factory=dict)
    executor: dict[str, Any] | None = None
    """Where the pipelines ran (``--executor ray``: the cluster); ``None`` for a local run."""

    def to_dict(self) -> dict[str, Any]:
        first = self.outcomes[0].result if self.outcomes else None
        corpus = first.context.get("corpus") if first is not None else None
        holes = {o.name: o.result.holes(o.name) for o in self.outcomes}
        return {
            **envelope(
                "benchmark",
                dataset=first.dataset if first is not None else None,
                policy=first.policy.to_dict() if first is not None else None,
                context={
                    "corpus": corpus,
                    "retrieval": {"top_k": self.invariants.get("top_k")},
                    "executor": self.executor,
                },
            ),
            "baseline": self.baseline,
            "invariants": self.invariants,
            "context_k": self.context_k,
            "pipelines": [
                {
                    "name": o.name,
                    "metrics": o.result.metrics,
                    "latency_ms": o.result.latency(),
                    "index_build_seconds": round(o.build_seconds, 3),
                    "context_tokens": o.context_tokens,
                    "counts": o.result.counts.__dict__,
                    "leaks": len(o.result.leaks()),
                    "isolation": o.result.tenant_isolation().to_json(),
                    "holes": holes[o.name].to_json(),
                }
                for o in self.outcomes
            ],
            "comparisons": self.comparison.get("comparisons", []),
            "notes": [f"incomplete judgments: {w}" for h in holes.values() if (w := h.warning())],
        }


async def evaluate_pipeline(
    dataset: Dataset,
    corpus: Corpus,
    config: PipelineConfig,
    specs: tuple[MetricSpec, ...],
    policy: Policy,
    options: RunOptions,
    cache: ComponentCache,
    context_k: int,
    qdrant_url: str | None,
) -> PipelineOutcome:
    """Build one pipeline (sharing ``cache``), warm it up with one query, run every case and score it."""
    from ragaudit.runner.execute import run_cases, warm_up

    prepared = prepare_pipeline(
        dataset, corpus, config, threshold=policy.relevance_threshold, cache=cache, qdrant_url=qdrant_url
    )
    retriever = prepared.pipeline.retriever
    await warm_up(retriever, prepared.dataset.cases, options.default_tenant, options.top_k)
    run = await run_cases(
        retriever,
        prepared.dataset.cases,
        options.top_k,
        default_tenant=options.default_tenant,
        concurrency=options.concurrency,
        timeout_s=options.timeout_s,
        name=config.name,
        progress=options.progress,
    )
    context = {"retrieval": {"top_k": options.top_k}, **prepared.context()}
    result = evaluate(prepared.dataset, run, specs, policy, context)
    return PipelineOutcome(
        config.name, result, prepared.pipeline.build_seconds, context_tokens(run, context_k)
    )


@dataclass(frozen=True)
class CellInputs:
    """What every pipeline of an experiment reads (shipped once to a Ray cluster)."""

    dataset: Dataset
    corpus: Corpus
    specs: tuple[MetricSpec, ...]
    policy: Policy
    options: RunOptions
    cache: ComponentCache
    context_k: int
    qdrant_url: str | None


async def pipeline_cell(shared: CellInputs, config: PipelineConfig) -> PipelineOutcome:
    """One cell of a benchmark or ablation: :func:`evaluate_pipeline` of ``config``."""
    s = shared
    return await evaluate_pipeline(
        s.dataset, s.corpus, config, s.specs, s.policy, s.options, s.cache, s.context_k, s.qdrant_url
    )


async def run_cells(
    configs: Sequence[PipelineConfig], inputs: CellInputs, executor: Executor | None
) -> tuple[list[PipelineOutcome], dict[str, Any] | None]:
    """Every config's outcome (in order) through ``executor`` (default: in this process, sharing
    ``inputs.cache``), and the provenance entry of a non-local executor (``None`` when local)."""
    runner = executor if executor is not None else LocalExecutor()
    if runner.name == "local":
        return await runner.map(pipeline_cell, inputs, configs), None
    remote = prepare_distributed(configs, inputs.corpus, runner, inputs.cache, inputs.qdrant_url)
    outcomes = await runner.map(pipeline_cell, replace(inputs, cache=remote.cache), configs)
    return outcomes, remote.provenance


async def run_benchmark(
    dataset: Dataset,
    corpus: Corpus,
    pipelines: Sequence[PipelineConfig],
    specs: tuple[MetricSpec, ...],
    policy: Policy,
    options: RunOptions,
    *,
    baseline: str | None = None,
    context_k: int = 5,
    report_dir: str | Path | None = None,
    resamples: int = 10_000,
    qdrant_url: str | None = None,
    cache: ComponentCache | None = None,
    executor: Executor | None = None,
    delta: float = DEFAULT_DELTA,
    power: float = DEFAULT_POWER,
    min_judged: float = DEFAULT_MIN_JUDGED,
) -> BenchmarkResult:
    """Build and evaluate every pipeline; compare each against ``baseline`` (default: the first).

    Each pipeline answers one warm-up query before it is timed, so model loading is not counted as
    the first case's latency. ``cache`` shares indexes with other experiments over the same corpus.
    ``executor`` runs the pipelines (default: one after another in this process); on Ray each
    pipeline is one task (see :func:`run_cells`).
    Each comparison carries its power figures (cases needed for ``delta`` with ``power``), and each
    pipeline its judged share of the top k (warning under ``min_judged``; :mod:`ragaudit.evaluation.holes`).
    """
    cache = cache if cache is not None else ComponentCache()
    inputs = CellInputs(dataset, corpus, specs, policy, options, cache, context_k, qdrant_url)
    outcomes, provenance = await run_cells(pipelines, inputs, executor)
    for outcome in outcomes:
        outcome.result = replace(outcome.result, min_judged=min_judged)
    if report_dir is not None:
        for outcome in outcomes:
            outcome.result.write_json(Path(report_dir) / f"{outcome.name}.json")
    names = [o.name for o in outcomes]
    base_name = baseline or names[0]
    if base_name not in names:
        raise ValueError(f"baseline {base_name!r} is not one of the pipelines ({', '.join(names)})")
    loaded = {o.name: LoadedReport(o.name, f"<{o.name}>", o.result.to_dict()) for o in outcomes}
    comparison = (
        compare_reports(
            [loaded[n] for n in names],
            loaded[base_name],
            n_resamples=resamples,
            delta=delta,
            power=power,
            min_judged=min_judged,
        )
        if len(names) > 1
        else {}
    )
    invariants = {
        "cases": len(dataset.cases),
        "tenants": sorted({c.tenant_id or "" for c in dataset.cases}),
        "top_k": options.top_k,
        "same_cases_for_every_pipeline": True,
    }
    bench = BenchmarkResult(outcomes, base_name, comparison, context_k, invariants, provenance)
    if report_dir is not None:
        write_artifact(bench.to_dict(), Path(report_dir) / "benchmark.json")
    return bench
