"""Query-rewrite evaluation: one pipeline without and with a rewrite stage, case by case.

For every golden case ragaudit runs the pipeline as configured but without its rewrite stage (the
baseline), then with the rewrite stage (``rerank(rewrite(first_stage))`` when the pipeline reranks),
over the same chunks, labels, tenants and ``top_k``. It reports

* per case: the query actually sent (recorded from the rewriter, after the stage's own rule that an
  empty rewrite keeps the original), the deterministic constraint check of
  :func:`ragaudit.experiments.entities.check_rewrite` (what was lost, added, swapped), both systems'
  metric values and their latencies;
* the metric deltas with paired significance (randomization test, bootstrap CI, Holm across the
  metrics: :func:`ragaudit.evaluation.compare.compare_reports`);
* the latency the rewrite adds: per-case differences (rewrite minus baseline) and the time spent
  inside the rewriter itself.

A case whose rewrite loses an entity or constraint is **flagged whatever its metrics say**: a rewrite
that retrieves better chunks for a different question (the Enterprise plan instead of the Pro plan)
is a wrong answer waiting to happen, so ``flagged_with_gain`` counts the flagged cases whose primary
metric improved.

Latency is measured with batching off (each query alone through ``search``, as the rewrite stage
serves them) and, by default, one query at a time, so the two systems are timed alike; the first
stage is warmed up with one new query text before either run (so the embedding model is loaded).
Dense retrievers embed queries through the on-disk embedding cache: a query text embedded by an
earlier run is a cache lookup, so compare the two systems on runs where both query sets are equally
new (a first run) or equally cached (a re-run; deterministic rewriters produce the same texts).

A non-local executor (``--executor ray``) embeds the corpus on its workers first and prebuilds the
BM25 indexes on the driver (:func:`~ragaudit.pipelines.distribute.prepare_distributed`), then runs the
whole evaluation, both systems, as **one** task: the baseline and the rewrite are timed in the same
process, as locally, so their latencies stay comparable. The eval reports of ``report_dir`` are
written by the driver. An ``llm`` rewrite stage reads its API key from the environment of the node
that runs the task.
"""

from __future__ import annotations

import functools
import math
import time
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragaudit.artifacts.envelope import envelope, utc_timestamp, write_artifact
from ragaudit.corpus.loading import Corpus
from ragaudit.data.run import Run
from ragaudit.data.schema import Dataset
from ragaudit.data.toml_files import read_toml
from ragaudit.errors import InputError
from ragaudit.evaluation.compare import LoadedReport, compare_reports
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.evaluation.live import RunOptions
from ragaudit.evaluation.result import EvalResult, percentile
from ragaudit.experiments.entities import ConstraintCheck, Vocabulary, check_rewrite
from ragaudit.metrics.names import MetricSpec
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.build import BuiltPipeline, ComponentCache, build_pipeline
from ragaudit.pipelines.config import PipelineConfig, StageConfig, parse_pipeline
from ragaudit.pipelines.distribute import prepare_distributed
from ragaudit.pipelines.prepare import prepare_pipeline
from ragaudit.retrieval.protocol import Retriever
from ragaudit.retrieval.rewrite import QueryRewriter, RewriteRetriever
from ragaudit.runner.execute import warm_up
from ragaudit.runner.executor import Executor, run_once

# ------------------------------------------------------------------------------------------ stage


def rewrite_stage(raw: Mapping[str, Any], source: str) -> StageConfig:
    """Check a ``[rewrite]`` table (``{"type": "rm3", ...}``) exactly as a pipeline file's is checked."""
    config = parse_pipeline({"retriever": {"type": "bm25"}, "rewrite": dict(raw)}, source)
    if config.rewrite is None:  # pragma: no cover - parse_pipeline returns the table it was given, or raises
        raise InputError(source, None, "no rewrite stage found", 'e.g. type = "rm3"')
    return config.rewrite


def load_rewrite_stage(path: str | Path) -> StageConfig:
    """Read a rewrite stage from TOML: a ``[rewrite]`` table, or its keys at the top level."""
    p = Path(path)
    raw, _ = read_toml(p, what="rewrite config", fix='write e.g. [rewrite] type = "rm3"')
    table = raw.get("rewrite", raw)
    if not isinstance(table, dict) or "type" not in table:
        raise InputError(
            str(p), None, "no rewrite stage found", 'write a [rewrite] table with a type, e.g. type = "rm3"'
        )
    return rewrite_stage(table, str(p))


# ------------------------------------------------------------------------------------------ recording


@dataclass
class _Rewrite:
    query: str
    seconds: float


class RecordingRewriter:
    """A :class:`QueryRewriter` that passes through to ``inner`` and records every query it sent.

    ``sent[(tenant, query)]`` is the query the base retriever saw (an empty rewrite means the
    original, as :class:`RewriteRetriever` decides) and the seconds the rewriter took.
    """

    def __init__(self, inner: QueryRewriter) -> None:
        self.inner = inner
        self.name = inner.name
        self.sent: dict[tuple[str, str], _Rewrite] = {}

    async def rewrite(self, query: str, *, tenant_id: str) -> str:
        started = time.perf_counter()
        out = await self.inner.rewrite(query, tenant_id=tenant_id)
        sent = out if isinstance(out, str) and out.strip() else query
        self.sent[(tenant_id, query)] = _Rewrite(sent, time.perf_counter() - started)
        return out


def find_rewrite_stage(retriever: object) -> RewriteRetriever | None:
    """The :class:`RewriteRetriever` in a stage chain (following ``.base``), if there is one."""
    seen = 0
    while retriever is not None and seen < 16:
        if isinstance(retriever, RewriteRetriever):
            return retriever
        retriever = getattr(retriever, "base", None)
        seen += 1
    return None


# ------------------------------------------------------------------------------------------ result


@dataclass(frozen=True)
class RewriteCase:
    """One golden case, without and with the rewrite."""

    id: str
    query: str
    tenant_id: str | None
    sent: str | None
    """The query the first stage received (``None`` when the rewrite never completed)."""
    check: ConstraintCheck | None
    baseline: Mapping[str, float]
    rewrite: Mapping[str, float]
    latency_baseline_ms: float | None
    latency_rewrite_ms: float | None
    rewriter_ms: float | None
    error: str | None = None

    @property
    def changed(self) -> bool:
        return self.sent is not None and self.sent != self.query

    @property
    def flagged(self) -> bool:
        """The rewrite lost an entity or constraint of the query (whatever the metrics say)."""
        return self.check is not None and not self.check.preserved

    def delta(self, metric: str) -> float:
        if metric not in self.baseline or metric not in self.rewrite:
            return math.nan
        return self.rewrite[metric] - self.baseline[metric]

    def to_json(self, primary: str) -> dict[str, Any]:
        lat_b, lat_r = self.latency_baseline_ms, self.latency_rewrite_ms
        out: dict[str, Any] = {
            "id": self.id,
            "query": self.query,
            "rewritten_query": self.sent,
            "changed": self.changed,
            "flagged": self.flagged,
            "flagged_with_gain": self.flagged and self.delta(primary) > 0,
            "constraints": self.check.to_json() if self.check is not None else None,
            "metrics": {
                "baseline": dict(self.baseline),
                "rewrite": dict(self.rewrite),
                "delta": {m: self.delta(m) for m in self.baseline if m in self.rewrite},
            },
            "latency_ms": {
                "baseline": lat_b,
                "rewrite": lat_r,
                "added": lat_r - lat_b if lat_b is not None and lat_r is not None else None,
                "rewriter": self.rewriter_ms,
            },
        }
        if self.tenant_id is not None:
            out["tenant_id"] = self.tenant_id
        if self.error is not None:
            out["error"] = self.error
        return out


def _summary(values: Sequence[float]) -> dict[str, float] | None:
    if not values:
        return None
    return {
        "mean": sum(values) / len(values),
        "p50": percentile(list(values), 50),
        "p95": percentile(list(values), 95),
    }


@dataclass
class RewriteEvaluation:
    """Everything ``ragaudit eval-rewrite`` reports (see the module docstring)."""

    dataset: Dataset
    corpus: Corpus
    policy: Policy
    baseline: EvalResult
    rewritten: EvalResult
    cases: list[RewriteCase]
    comparison: dict[str, Any]
    rewriter: str
    stage: StageConfig
    pipelines: dict[str, Any]
    retrieval: dict[str, Any]
    vocabulary_terms: int = 0
    notes: list[str] = field(default_factory=list)
    created_at: str = field(default_factory=utc_timestamp)
    executor: dict[str, Any] | None = None
    """Where the evaluation ran (``--executor ray``: the cluster); ``None`` for a local run."""

    @property
    def primary_metric(self) -> str:
        """The metric that decides "recall improved": the first recall metric asked for, else the first."""
        names = list(self.baseline.metrics)
        return next((m for m in names if m.startswith("R@")), names[0] if names else "")

    def flagged(self) -> list[RewriteCase]:
        return [c for c in self.cases if c.flagged]

    def constraint_summary(self) -> dict[str, Any]:
        checked = [c for c in self.cases if c.check is not None]
        lost = Counter(item.kind for c in checked if c.check is not None for item in c.check.lost)
        added = Counter(item.kind for c in checked if c.check is not None for item in c.check.added)
        primary = self.primary_metric
        return {
            "cases": len(self.cases),
            "checked": len(checked),
            "rewritten": sum(c.changed for c in self.cases),
            "preserved": sum(not c.flagged for c in checked),
            "flagged": len(self.flagged()),
            "flagged_with_gain": sum(c.flagged and c.delta(primary) > 0 for c in self.cases),
            "swapped": sum(len(c.check.swapped) for c in checked if c.check is not None),
            "lost_by_kind": dict(sorted(lost.items())),
            "added_by_kind": dict(sorted(added.items())),
            "vocabulary_terms": self.vocabulary_terms,
        }

    def latency(self) -> dict[str, Any]:
        pairs = [
            (c.latency_baseline_ms, c.latency_rewrite_ms)
            for c in self.cases
            if c.latency_baseline_ms is not None and c.latency_rewrite_ms is not None
        ]
        rewriter = [c.rewriter_ms for c in self.cases if c.rewriter_ms is not None]
        return {
            "baseline": _summary([b for b, _ in pairs]),
            "rewrite": _summary([r for _, r in pairs]),
            "added": _summary([r - b for b, r in pairs]),
            "rewriter": _summary(rewriter),
            "paired_cases": len(pairs),
        }

    def to_dict(self) -> dict[str, Any]:
        base, rw = self.baseline.metrics, self.rewritten.metrics
        primary = self.primary_metric
        return {
            **envelope(
                "rewrite-eval",
                created_at=self.created_at,
                dataset=self.dataset.info(),
                policy=self.policy.to_dict(),
                context={
                    "pipeline": self.pipelines["rewrite"],
                    "corpus": self.corpus.info(),
                    "retrieval": self.retrieval,
                    "executor": self.executor,
                },
            ),
            "dataset": self.dataset.info(),
            "policy": self.policy.to_dict(),
            "corpus": self.corpus.info(),
            "pipelines": self.pipelines,
            "rewriter": self.rewriter,
            "rewrite_stage": self.stage.to_dict(),
            "retrieval": self.retrieval,
            "primary_metric": primary,
            "metrics": {
                "baseline": base,
                "rewrite": rw,
                "delta": {m: rw[m] - base[m] for m in base if m in rw},
            },
            "comparisons": self.comparison.get("comparisons", []),
            "significance": {
                k: self.comparison.get(k) for k in ("alpha", "correction", "n_resamples", "seed")
            },
            "latency_ms": self.latency(),
            "constraints": self.constraint_summary(),
            "counts": {"baseline": self.baseline.counts.__dict__, "rewrite": self.rewritten.counts.__dict__},
            "errors": {"baseline": len(self.baseline.errors), "rewrite": len(self.rewritten.errors)},
            "notes": self.notes,
            "per_case": [c.to_json(primary) for c in self.cases],
        }

    def write_json(self, path: str | Path) -> None:
        """The artifact as strict JSON (an undefined value, NaN, is written as ``null``)."""
        write_artifact(self.to_dict(), path)


# ------------------------------------------------------------------------------------------ running


async def _run(retriever: Retriever, dataset: Dataset, options: RunOptions, name: str) -> Run:
    from ragaudit.runner.execute import run_cases

    return await run_cases(
        retriever,
        dataset.cases,
        options.top_k,
        default_tenant=options.default_tenant,
        concurrency=options.concurrency,
        timeout_s=options.timeout_s,
        name=name,
        progress=options.progress,
        batch_size=1,
    )


def _cases(
    dataset: Dataset,
    base: EvalResult,
    rewritten: EvalResult,
    rewrite_run: Run,
    recorder: RecordingRewriter,
    vocabulary: Vocabulary | None,
    default_tenant: str | None,
) -> list[RewriteCase]:
    by_id_b = {c.id: c for c in base.per_case}
    by_id_r = {c.id: c for c in rewritten.per_case}
    out: list[RewriteCase] = []
    for case in dataset.cases:
        tenant = case.tenant_id or default_tenant
        record = recorder.sent.get((tenant or "", case.query))
        b, r = by_id_b[case.id], by_id_r[case.id]
        run = rewrite_run.cases.get(case.id)
        out.append(
            RewriteCase(
                id=case.id,
                query=case.query,
                tenant_id=case.tenant_id,
                sent=record.query if record is not None else None,
                check=check_rewrite(case.query, record.query, vocabulary) if record is not None else None,
                baseline=b.metrics,
                rewrite=r.metrics,
                latency_baseline_ms=b.latency_ms,
                latency_rewrite_ms=r.latency_ms,
                rewriter_ms=record.seconds * 1000.0 if record is not None else None,
                error=run.error if run is not None else None,
            )
        )
    return out


def write_reports(result: RewriteEvaluation, report_dir: str | Path) -> None:
    """Both eval reports (``baseline.json``, ``rewrite.json``) into ``report_dir``."""
    result.baseline.write_json(Path(report_dir) / "baseline.json")
    result.rewritten.write_json(Path(report_dir) / "rewrite.json")


async def evaluate_rewrite(
    dataset: Dataset,
    corpus: Corpus,
    config: PipelineConfig,
    stage: StageConfig,
    specs: tuple[MetricSpec, ...],
    policy: Policy,
    options: RunOptions,
    *,
    vocabulary: Vocabulary | None = None,
    resamples: int = 10_000,
    seed: int = 0,
    alpha: float = 0.05,
    qdrant_url: str | None = None,
    report_dir: str | Path | None = None,
    cache: ComponentCache | None = None,
    executor: Executor | None = None,
) -> RewriteEvaluation:
    """Evaluate ``config`` without any rewrite stage and with ``stage`` (see the module docstring).

    ``report_dir`` also writes both eval reports (``baseline.json``, ``rewrite.json``) for
    ``ragaudit compare``. A non-local ``executor`` embeds the corpus on its workers first and runs
    the evaluation as one task there.
    """
    cache = cache if cache is not None else ComponentCache()
    base_config = replace(config, rewrite=None)
    with_config = replace(config, name=f"{config.name}+rewrite", rewrite=stage)
    if executor is not None and executor.name != "local":
        remote = prepare_distributed([base_config, with_config], corpus, executor, cache, qdrant_url)
        job = functools.partial(
            evaluate_rewrite,
            dataset,
            corpus,
            config,
            stage,
            specs,
            policy,
            options,
            vocabulary=vocabulary,
            resamples=resamples,
            seed=seed,
            alpha=alpha,
            qdrant_url=qdrant_url,
            cache=remote.cache,
        )
        result = await run_once(executor, job)
        if report_dir is not None:
            write_reports(result, report_dir)
        return replace(result, executor=remote.provenance)
    prepared = prepare_pipeline(
        dataset, corpus, base_config, threshold=policy.relevance_threshold, cache=cache, qdrant_url=qdrant_url
    )
    scored_on = prepared.dataset
    built: BuiltPipeline = build_pipeline(with_config, corpus, cache=cache, qdrant_url=qdrant_url)
    rewrite_stage_retriever = find_rewrite_stage(built.retriever)
    if rewrite_stage_retriever is None:  # pragma: no cover - build_pipeline always adds the stage
        raise RuntimeError("the rewrite pipeline has no rewrite stage")
    recorder = RecordingRewriter(rewrite_stage_retriever.rewriter)
    rewrite_stage_retriever.rewriter = recorder

    await warm_up(prepared.pipeline.retriever, scored_on.cases, options.default_tenant, options.top_k)
    base_run = await _run(prepared.pipeline.retriever, scored_on, options, base_config.name)
    rewrite_run = await _run(built.retriever, scored_on, options, with_config.name)
    retrieval = {
        "top_k": options.top_k,
        "concurrency": options.concurrency,
        "timeout_s": options.timeout_s,
        "batched": False,
    }
    base_result = evaluate(scored_on, base_run, specs, policy, {"retrieval": retrieval, **prepared.context()})
    rewrite_result = evaluate(
        scored_on,
        rewrite_run,
        specs,
        policy,
        {"retrieval": retrieval, "pipeline": built.info(), "corpus": corpus.info()},
    )
    comparison = compare_reports(
        [
            LoadedReport("baseline", "<baseline>", base_result.to_dict()),
            LoadedReport("rewrite", "<rewrite>", rewrite_result.to_dict()),
        ],
        metrics=[s.name for s in specs],
        alpha=alpha,
        n_resamples=resamples,
        seed=seed,
    )
    cases = _cases(
        scored_on, base_result, rewrite_result, rewrite_run, recorder, vocabulary, options.default_tenant
    )
    notes = list(getattr(recorder.inner, "warnings", []))[:20]
    result = RewriteEvaluation(
        dataset=dataset,
        corpus=corpus,
        policy=policy,
        baseline=base_result,
        rewritten=rewrite_result,
        cases=cases,
        comparison=comparison,
        rewriter=recorder.name,
        stage=stage,
        pipelines={"baseline": prepared.pipeline.info(), "rewrite": built.info()},
        retrieval=retrieval,
        vocabulary_terms=len(vocabulary.terms) if vocabulary is not None else 0,
        notes=notes,
    )
    if report_dir is not None:
        write_reports(result, report_dir)
    return result
