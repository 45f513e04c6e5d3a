"""Strategy benchmark: several pipelines over one corpus and golden set, side by side, with paired
significance against a baseline.

Invariants (the lesson's): every pipeline sees the same cases, the same tenants and the same k; the
result says so. Indexes shared between pipelines (BM25 under ``bm25`` and ``hybrid``) are built once,
but each pipeline's build time counts every index it uses, and says how many corpus embeddings the
cache served and how many were computed (a warm cache builds in a fraction of a cold one's time).

Latency is measured per query by default: one query at a time, each timed on its own, so the figure
is what one request costs; and the pipelines take turns query by query (all are built and warmed up
first), so each meets the same load on a shared machine and their latencies compare
(``per_query_latency=False`` keeps the runner's concurrency and batch fast path, one pipeline after
another, and the report labels the figures as batched).

The pipelines are ranked by the first metric; the ``ranking`` holds the winner, the runner-up and
every other pipeline's paired comparison against the winner on that metric (Holm-corrected across
them), beside the comparisons against the baseline on every metric.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragaudit.artifacts.envelope import envelope, write_artifact
from ragaudit.artifacts.in_sample import first_in_sample, section_of
from ragaudit.corpus.chunkers import count_tokens
from ragaudit.corpus.loading import Corpus
from ragaudit.data.run import Run
from ragaudit.data.schema import Dataset
from ragaudit.evaluation.bench_in_sample import fitted_record
from ragaudit.evaluation.compare import DEFAULT_DELTA, DEFAULT_POWER, LoadedReport, compare_reports
from ragaudit.evaluation.evaluate import cut_by_top_k, evaluate
from ragaudit.evaluation.holes import DEFAULT_MIN_JUDGED
from ragaudit.evaluation.live import RunOptions
from ragaudit.evaluation.result import EvalResult
from ragaudit.evaluation.slices import tenant_slices, with_tenant_comparisons
from ragaudit.metrics.names import MetricSpec, parse_metrics
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.build import ComponentCache
from ragaudit.pipelines.config import PipelineConfig
from ragaudit.pipelines.distribute import prepare_distributed
from ragaudit.pipelines.prepare import PreparedPipeline, prepare_pipeline
from ragaudit.runner.executor import Executor, LocalExecutor
from ragaudit.stats.bootstrap import bootstrap_mean_ci


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
    latency_basis: str | None = None
    """How ``latency_ms`` was measured (:func:`ragaudit.runner.execute.latency_basis`)."""
    embeddings: dict[str, int] | None = None
    """Corpus embeddings cached / computed while the pipeline was built (None: no dense part)."""


@dataclass
class BenchmarkResult:
    outcomes: list[PipelineOutcome]
    baseline: str
    comparison: dict[str, Any]
    context_k: int
    invariants: dict[str, Any] = field(default_factory=dict)
    executor: dict[str, Any] | None = None
    """Where the pipelines ran (``--executor ray``: the cluster); ``None`` for a local run."""
    ranking: dict[str, Any] | None = None
    """``{metric, order, winner, runner_up, against_winner}`` (:func:`rank_pipelines`)."""

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
                    "metrics_ci": mean_cis(o.result),
                    "latency_ms": o.result.latency(),
                    **({"latency_basis": o.latency_basis} if o.latency_basis else {}),
                    "index_build_seconds": round(o.build_seconds, 3),
                    **({"embeddings": o.embeddings} if o.embeddings is not None else {}),
                    "context_tokens": o.context_tokens,
                    "counts": o.result.counts.__dict__,
                    "leaks": len(o.result.leaks()),
                    "isolation": o.result.tenant_isolation().to_json(),
                    "holes": holes[o.name].to_json(),
                    "tenant_slices": tenant_slices(
                        [c.to_json() for c in o.result.per_case], list(o.result.metrics)
                    ),
                    **_own_in_sample(o.result),
                    **fitted_record(o.result.context, [c.to_json() for c in o.result.per_case]),
                }
                for o in self.outcomes
            ],
            "comparisons": self.comparison.get("comparisons", []),
            **(
                {"tenant_comparisons": self.comparison["tenant_comparisons"]}
                if "tenant_comparisons" in self.comparison
                else {}
            ),
            "notes": [
                *self._depth_notes(),
                *(f"incomplete judgments: {w}" for h in holes.values() if (w := h.warning())),
            ],
            **({"ranking": self.ranking} if self.ranking is not None else {}),
            **self._in_sample(),
        }

    def _depth_notes(self) -> list[str]:
        """The note when ``top_k`` is shallower than a metric's cut-off (every pipeline asked the same)."""
        names = list(dict.fromkeys(m for o in self.outcomes for m in o.result.metrics))
        retrieval = {"retrieval": {"top_k": self.invariants.get("top_k")}}
        cut = cut_by_top_k(parse_metrics(names), retrieval) if names else None
        return [cut] if cut else []

    def _in_sample(self) -> dict[str, Any]:
        """``{"in_sample": section}`` when a pipeline's fitted stage scored cases it was fitted on (every
        such pipeline named in its text and ``systems``; every view prints it first). Each pipeline's own
        state is in its entry (:func:`_own_in_sample`); this report-level section is kept for readers of it."""
        return first_in_sample((f"pipeline {o.name}", o.result.context) for o in self.outcomes)


def _own_in_sample(result: EvalResult) -> dict[str, Any]:
    """``{"in_sample": section}`` of a pipeline with a fitted stage (``in_sample``, ``held_out`` or
    ``unknown``: :mod:`ragaudit.artifacts.in_sample`), ``{}`` without one."""
    section = section_of(result.context)
    return {"in_sample": dict(section)} if section is not None else {}


MEAN_CI_LEVEL = 0.95
MEAN_CI_RESAMPLES = 2_000


def mean_cis(result: EvalResult) -> dict[str, list[float] | None]:
    """Each metric's 95% percentile-bootstrap CI of the mean over the answerable cases (seed 0; None when
    no case has a finite value): what the comparison chart draws around each pipeline's dot."""
    out: dict[str, list[float] | None] = {}
    for metric in result.metrics:
        values = [v for v in result.per_case_values(metric).values() if math.isfinite(v)]
        ci = bootstrap_mean_ci(values, MEAN_CI_LEVEL, MEAN_CI_RESAMPLES, seed=0) if values else None
        out[metric] = [ci[0], ci[1]] if ci is not None else None
    return out


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
    """Build one pipeline (sharing ``cache``), warm it up with one query, run every case (as ``options``
    say: :meth:`RunOptions.timed_per_query` for per-query latency) and score it."""
    from ragaudit.runner.chunk_owners import PipelineChunkOwnership
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
        batch_size=options.batch_size,
        ownership=PipelineChunkOwnership(prepared.owned_chunks()),  # by id and content, from the corpus
        shared_tenants=options.shared_tenants,
    )
    return score_pipeline(prepared, run, specs, policy, options, context_k)


def score_pipeline(
    prepared: PreparedPipeline,
    run: Run,
    specs: tuple[MetricSpec, ...],
    policy: Policy,
    options: RunOptions,
    context_k: int,
) -> PipelineOutcome:
    """Score a prepared pipeline's run: its eval result, build time, context tokens, latency basis."""
    retrieval: dict[str, Any] = {
        "top_k": options.top_k,
        "concurrency": options.concurrency,
        "latency": run.latency_basis,
    }
    if options.shared_tenants:  # what the tenant check allowed, for the gate to compare with its policy
        retrieval["shared_tenants"] = sorted(options.shared_tenants)
    result = evaluate(prepared.dataset, run, specs, policy, {"retrieval": retrieval, **prepared.context()})
    built = prepared.pipeline
    tokens = context_tokens(run, context_k)
    return PipelineOutcome(
        built.config.name, result, built.build_seconds, tokens, run.latency_basis, built.embeddings
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


async def _taking_turns(
    dataset: Dataset,
    corpus: Corpus,
    pipelines: Sequence[PipelineConfig],
    specs: tuple[MetricSpec, ...],
    policy: Policy,
    options: RunOptions,
    cache: ComponentCache,
    context_k: int,
    qdrant_url: str | None,
) -> list[PipelineOutcome]:
    """Build every pipeline, warm each up, then time them one query at a time taking turns case by case
    (:func:`ragaudit.runner.execute.run_interleaved`), so their latencies meet the same load."""
    from ragaudit.runner.chunk_owners import PipelineChunkOwnership
    from ragaudit.runner.execute import run_interleaved, warm_up

    prepared = [
        prepare_pipeline(
            dataset, corpus, c, threshold=policy.relevance_threshold, cache=cache, qdrant_url=qdrant_url
        )
        for c in pipelines
    ]
    for p in prepared:
        await warm_up(p.pipeline.retriever, p.dataset.cases, options.default_tenant, options.top_k)
    runs = await run_interleaved(
        {p.pipeline.config.name: p.pipeline.retriever for p in prepared},
        dataset.cases,
        options.top_k,
        default_tenant=options.default_tenant,
        timeout_s=options.timeout_s,
        retry=options.retry,
        progress=options.progress,
        require_tenant_labels=options.require_tenant_labels,
        ownership={p.pipeline.config.name: PipelineChunkOwnership(p.owned_chunks()) for p in prepared},
        shared_tenants=options.shared_tenants,
    )
    return [
        score_pipeline(p, runs[p.pipeline.config.name], specs, policy, options, context_k) for p in prepared
    ]


def loaded_reports(outcomes: Sequence[PipelineOutcome]) -> dict[str, LoadedReport]:
    """Each outcome's eval report as :func:`compare_reports` reads it, by pipeline name."""
    return {o.name: LoadedReport(o.name, f"<{o.name}>", o.result.to_dict()) for o in outcomes}


def rank_pipelines(
    outcomes: Sequence[PipelineOutcome],
    metric: str,
    resamples: int,
    alpha: float = 0.05,
    loaded: Mapping[str, LoadedReport] | None = None,
) -> dict[str, Any]:
    """The pipelines ranked by ``metric`` (highest first; a tie keeps the given order), the winner, the
    runner-up, and every other pipeline compared with the winner on ``metric`` (paired randomization
    test, Holm-corrected across those comparisons: :func:`ragaudit.evaluation.compare.compare_reports`)."""

    def score(o: PipelineOutcome) -> float:
        value = o.result.metrics.get(metric)
        return value if isinstance(value, (int, float)) and math.isfinite(value) else -math.inf

    order = sorted(outcomes, key=score, reverse=True)  # sorted is stable: ties keep the given order
    winner = order[0]
    loaded = loaded if loaded is not None else loaded_reports(outcomes)
    against = (
        compare_reports(
            [loaded[o.name] for o in order], loaded[winner.name], [metric], alpha=alpha, n_resamples=resamples
        ).get("comparisons", [])
        if len(order) > 1
        else []
    )
    return {
        "metric": metric,
        "order": [o.name for o in order],
        "winner": winner.name,
        "runner_up": order[1].name if len(order) > 1 else None,
        "against_winner": against,
    }


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
    per_query_latency: bool = True,
) -> BenchmarkResult:
    """Build and evaluate every pipeline; compare each against ``baseline`` (default: the first), and
    rank them by the first metric (:func:`rank_pipelines`).

    Each pipeline answers one warm-up query before it is timed, so model loading is not counted as
    the first case's latency. ``per_query_latency`` sends one query at a time, each timed on its own
    (else ``options`` decide, and a batching engine's figures are a batch's time / its size).
    ``cache`` shares indexes with other experiments over the same corpus.
    ``executor`` runs the pipelines (default: in this process); on Ray each pipeline is one task
    (see :func:`run_cells`), timed one query at a time within its task when ``per_query_latency``.
    Each comparison carries its power figures (cases needed for ``delta`` with ``power``), and each
    pipeline its judged share of the top k (warning under ``min_judged``; :mod:`ragaudit.evaluation.holes`).
    """
    cache = cache if cache is not None else ComponentCache()
    remote = executor is not None and executor.name != "local"
    taking_turns = not remote and per_query_latency and len({c.name for c in pipelines}) == len(pipelines) > 1
    provenance: dict[str, Any] | None = None
    if taking_turns:
        run_options = options.timed_per_query()
        outcomes = await _taking_turns(
            dataset, corpus, pipelines, specs, policy, run_options, cache, context_k, qdrant_url
        )
    else:
        run_options = options.timed_per_query() if per_query_latency else options
        inputs = CellInputs(dataset, corpus, specs, policy, run_options, cache, context_k, qdrant_url)
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
    loaded = loaded_reports(outcomes)
    comparison = (
        with_tenant_comparisons(
            compare_reports(
                [loaded[n] for n in names],
                loaded[base_name],
                n_resamples=resamples,
                delta=delta,
                power=power,
                min_judged=min_judged,
            ),
            [loaded[n] for n in names],
            loaded[base_name],
        )
        if len(names) > 1
        else {}
    )
    invariants = {
        "cases": len(dataset.cases),
        "tenants": sorted({c.tenant_id or "" for c in dataset.cases}),
        "top_k": options.top_k,
        "same_cases_for_every_pipeline": True,
        **({"latency_timed": "pipelines taking turns query by query"} if taking_turns else {}),
    }
    ranking = (
        rank_pipelines(outcomes, specs[0].name, resamples, loaded=loaded) if specs and outcomes else None
    )
    bench = BenchmarkResult(
        outcomes, base_name, comparison, context_k, invariants, executor=provenance, ranking=ranking
    )
    if report_dir is not None:
        write_artifact(bench.to_dict(), Path(report_dir) / "benchmark.json")
    return bench
