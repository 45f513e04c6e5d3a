"""The Python API that matches the command line: each function calls what its command calls.

========================  ==========================================  ===========================
Python                    command                                     returns
========================  ==========================================  ===========================
``pipeline(spec, corpus)``  ``--pipeline SPEC --corpus CORPUS``        :class:`Pipeline` (a retriever)
``evaluate``              ``ragaudit eval --run``                     :class:`Evaluation`
``evaluate_retriever``    ``ragaudit eval --pipeline/--retriever``    :class:`Evaluation` (async)
``compare``               ``ragaudit compare``                        :class:`CompareResult`
``bench``                 ``ragaudit bench``                          :class:`BenchResult`
``audit_tenants``         ``ragaudit audit-tenants``                  :class:`AuditResult`
``gate``                  ``ragaudit gate``                           :class:`GateVerdict`
========================  ==========================================  ===========================

``bench`` and ``audit_tenants`` are synchronous; called while an event loop runs in this thread (a
Jupyter cell), they run their coroutine on a fresh loop in a worker thread and wait for it, so they
work in a notebook as in a script. ``evaluate_retriever`` stays a coroutine (``await`` it in a notebook,
``asyncio.run`` it in a script), as it was.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from ragaudit.api.results import AuditResult, BenchResult, CompareResult, Evaluation, GateVerdict
from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.data.loading import load_dataset
from ragaudit.data.schema import Dataset
from ragaudit.errors import InputError
from ragaudit.evaluation.compare import (
    DEFAULT_DELTA,
    DEFAULT_POWER,
    LoadedReport,
    compare_reports,
    load_report,
)
from ragaudit.evaluation.evaluate import RunLike
from ragaudit.evaluation.evaluate import evaluate as evaluate_run
from ragaudit.evaluation.id_forms import warn_id_forms
from ragaudit.evaluation.live import RunOptions, retrieval_depth
from ragaudit.evaluation.result import EvalResult
from ragaudit.evaluation.retriever_eval import evaluate_retriever as evaluate_live_retriever
from ragaudit.evaluation.slices import with_tenant_comparisons
from ragaudit.metrics.names import DEFAULT_METRICS, MetricSpec, parse_metrics
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.sources import OpenedSource, SourceSpec, open_source
from ragaudit.retrieval.protocol import RetrievedChunk, Retriever

T = TypeVar("T")
ReportLike = str | Path | EvalResult | LoadedReport | Mapping[str, Any]


def run_sync(make: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """Run the coroutine ``make()`` to its end: ``asyncio.run`` when no loop runs in this thread, else on
    a fresh loop in a worker thread (a notebook's loop is running and cannot be re-entered)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="ragaudit") as pool:
        return pool.submit(lambda: asyncio.run(make())).result()


class Pipeline:
    """A preset or pipeline TOML built over a corpus (``ragaudit.pipeline``): a retriever with
    ``async search(*, tenant_id, query, top_k)``, plus what ``ragaudit eval --pipeline`` records: its
    ``name``, ``chunks``, ``corpus`` and ``source`` (the :class:`~ragaudit.pipelines.sources.OpenedSource`)."""

    def __init__(self, source: OpenedSource) -> None:
        self.source = source
        self.name = source.label
        self.chunks = source.chunks
        self.corpus = source.corpus

    async def search(self, *, tenant_id: str, query: str, top_k: int) -> list[RetrievedChunk]:
        return await self.source.retriever.search(tenant_id=tenant_id, query=query, top_k=top_k)

    def __getattr__(self, name: str) -> Any:  # search_many and the other optional hooks of the engine
        return getattr(self.source.retriever, name)

    def __repr__(self) -> str:
        return f"Pipeline({self.name!r}, {len(self.chunks)} chunks)"


def pipeline(spec: str | Path, corpus: str | Path | Corpus, *, qdrant_url: str | None = None) -> Pipeline:
    """Open a preset (``bm25``, ``dense``, ``hybrid``, ``hybrid-rerank:MODEL.json``) or a pipeline TOML over
    ``corpus`` (a JSONL file or a loaded :class:`~ragaudit.corpus.loading.Corpus`), as ``--pipeline`` does."""
    the_corpus = corpus if isinstance(corpus, Corpus) else load_corpus(corpus)
    return Pipeline(open_source(SourceSpec(pipeline=str(spec), qdrant_url=qdrant_url), corpus=the_corpus))


def evaluate(
    dataset: str | Path | Dataset,
    run: RunLike,
    metrics: Iterable[MetricSpec] | str | None = None,
    policy: Policy | None = None,
    context: Mapping[str, Any] | None = None,
) -> Evaluation:
    """Score a run you already have (a run file, or ``{case: [ids]}`` / ``{case: {id: score}}``), as
    ``ragaudit eval --run`` does (:func:`ragaudit.evaluation.evaluate.evaluate`); warns
    (:class:`~ragaudit.evaluation.id_forms.IdFormWarning`) when retrieved ids miss judged ids only by
    their form (NFC/NFD, width, case)."""
    result = Evaluation.of(evaluate_run(dataset, run, metrics, policy, context))
    warn_id_forms(result.notes)
    return result


async def evaluate_retriever(
    retriever: Retriever | Pipeline,
    dataset_path: str | Path | Dataset,
    tenant_id: str | None = None,
    top_k: int | None = None,
    **options: Any,
) -> Evaluation:
    """Query ``retriever`` for every case and score it (:func:`ragaudit.evaluation.retriever_eval.evaluate_retriever`,
    every keyword of it). A :class:`Pipeline` is scored as ``ragaudit eval --pipeline P --corpus C`` scores it:
    the labels projected onto its chunks, each returned chunk's tenant checked against the corpus, and
    the pipeline and corpus recorded in the report."""
    if isinstance(retriever, Pipeline):
        from ragaudit.runner.chunk_owners import PipelineChunkOwnership

        policy = options.get("policy") or Policy()
        dataset = (
            dataset_path
            if isinstance(dataset_path, Dataset)
            else load_dataset(dataset_path, threshold=policy.relevance_threshold)
        )
        source = retriever.source
        if source.pipeline is not None and source.pipeline.external:  # as --retriever: from the corpus
            from ragaudit.security.ownership import OwnershipIndex

            corpus = source.corpus
            options.setdefault("ownership", OwnershipIndex.build(corpus.documents) if corpus else None)
        options.setdefault("ownership", PipelineChunkOwnership(source.chunks))  # as eval --pipeline checks
        options.setdefault("context", source.provenance())
        options.setdefault("name", retriever.name)
        return Evaluation.of(
            await evaluate_live_retriever(
                source.retriever,
                source.scored_on(dataset, policy.relevance_threshold),
                tenant_id,
                top_k,
                **options,
            )
        )
    return Evaluation.of(await evaluate_live_retriever(retriever, dataset_path, tenant_id, top_k, **options))


def _loaded(report: ReportLike, index: int) -> LoadedReport:
    if isinstance(report, LoadedReport):
        return report
    if isinstance(report, (str, Path)):
        return load_report(report)
    data = report.to_dict() if isinstance(report, EvalResult) else dict(report)
    if data.get("kind", "eval") != "eval":  # another kind's per_case and metrics mean something else
        raise InputError(
            f"report {index + 1}",
            None,
            f"not a ragaudit eval report (a {data['kind']!r} report)",
            "pass an eval report ('ragaudit eval --out', ragaudit.evaluate(...).to_dict())",
        )
    label = str(data.get("run", {}).get("name") or f"report {index + 1}")
    return LoadedReport(label, f"<{label}>", data)


def _distinct(reports: list[LoadedReport]) -> list[LoadedReport]:
    """Two runs with the same name are told apart by their position (as the command does by file name)."""
    labels = [r.label for r in reports]
    if len(set(labels)) == len(labels):
        return reports
    return [LoadedReport(f"{r.label} ({i + 1})", r.path, r.data) for i, r in enumerate(reports)]


def compare(
    *reports: ReportLike,
    baseline: ReportLike | None = None,
    metrics: Iterable[MetricSpec] | str | None = None,
    alpha: float = 0.05,
    resamples: int = 10_000,
    seed: int = 0,
    delta: float = DEFAULT_DELTA,
    power: float = DEFAULT_POWER,
) -> CompareResult:
    """Compare eval reports (paths, :class:`Evaluation` results or report dicts) against the baseline
    (default: the first), overall and per tenant, as ``ragaudit compare`` does."""
    loaded = _distinct(
        [_loaded(r, i) for i, r in enumerate([*([baseline] if baseline is not None else []), *reports])]
    )
    names = (
        None
        if metrics is None
        else [m.name for m in (parse_metrics(metrics) if isinstance(metrics, str) else metrics)]
    )
    result = compare_reports(loaded, loaded[0], names, alpha, resamples, seed, delta=delta, power=power)
    return CompareResult(with_tenant_comparisons(result, loaded, loaded[0]))


def _specs(metrics: Iterable[MetricSpec] | str | None) -> tuple[MetricSpec, ...]:
    if metrics is None:
        return DEFAULT_METRICS
    return parse_metrics(metrics) if isinstance(metrics, str) else tuple(metrics)


def bench(
    dataset: str | Path | Dataset,
    corpus: str | Path | Corpus,
    pipelines: Sequence[str | Path] | str,
    *,
    metrics: Iterable[MetricSpec] | str | None = None,
    policy: Policy | None = None,
    baseline: str | None = None,
    top_k: int | None = None,
    context_k: int = 5,
    resamples: int = 10_000,
    per_query_latency: bool = True,
    out_dir: str | Path | None = None,
) -> BenchResult:
    """Build and evaluate several pipelines (presets or TOML files; ``"bm25,dense"`` works too) on one
    corpus and golden set, compare them with the baseline and rank them, as ``ragaudit bench`` does
    (:func:`ragaudit.experiments.benchmark.run_benchmark`; ``out_dir`` writes its reports)."""
    from ragaudit.experiments.benchmark import BenchmarkResult, run_benchmark
    from ragaudit.pipelines.config import resolve_pipeline

    policy = policy or Policy()
    specs = _specs(metrics)
    the_dataset = (
        dataset
        if isinstance(dataset, Dataset)
        else load_dataset(dataset, threshold=policy.relevance_threshold)
    )
    the_corpus = corpus if isinstance(corpus, Corpus) else load_corpus(corpus)
    given = (
        [p.strip() for p in pipelines.split(",")]
        if isinstance(pipelines, str)
        else [str(p) for p in pipelines]
    )
    configs = [resolve_pipeline(p) for p in given if p]
    if not configs:
        raise InputError(
            "pipelines", None, "no pipeline given", 'e.g. ragaudit.bench(..., pipelines=["bm25", "dense"])'
        )
    options = RunOptions(retrieval_depth(specs, top_k), progress=False)

    def make() -> Coroutine[Any, Any, BenchmarkResult]:
        return run_benchmark(
            the_dataset,
            the_corpus,
            configs,
            specs,
            policy,
            options,
            baseline=baseline,
            context_k=context_k,
            report_dir=out_dir,
            resamples=resamples,
            per_query_latency=per_query_latency,
        )

    return BenchResult(run_sync(make))


def audit_tenants(
    retriever: Retriever | Pipeline,
    corpus: str | Path | Corpus,
    *,
    top_k: int = 10,
    probes_per_tenant: int | None = None,
    max_error_rate: float = 0.0,
    **options: Any,
) -> AuditResult:
    """Probe ``retriever`` with every tenant's content asked as every other tenant, as ``ragaudit
    audit-tenants`` does (:func:`ragaudit.security.tenant_audit.audit_tenants`; more options are
    :class:`~ragaudit.security.tenant_audit.AuditOptions` keywords). A :class:`Pipeline`'s chunks
    attribute what it returns."""
    from ragaudit.security.ownership import OwnershipIndex
    from ragaudit.security.probes import DEFAULT_PER_TENANT, generate_probes
    from ragaudit.security.tenant_audit import AuditOptions, TenantAudit
    from ragaudit.security.tenant_audit import audit_tenants as run_audit

    the_corpus = corpus if isinstance(corpus, Corpus) else load_corpus(corpus)
    chunks = retriever.chunks if isinstance(retriever, Pipeline) else []
    target = retriever.source.retriever if isinstance(retriever, Pipeline) else retriever
    label = retriever.name if isinstance(retriever, Pipeline) else type(retriever).__name__
    source = retriever.source.context if isinstance(retriever, Pipeline) else {"retriever": label}
    ownership = OwnershipIndex.build(the_corpus.documents, chunks, ())
    probes = generate_probes(
        the_corpus.documents, canaries=(), per_tenant=probes_per_tenant or DEFAULT_PER_TENANT
    )
    opts = AuditOptions(top_k=top_k, progress=False, **options)
    context = {"source": {"label": label, **source}, "corpus": the_corpus.info()}

    def make() -> Coroutine[Any, Any, TenantAudit]:
        return run_audit(target, ownership, probes, opts, context=context)

    return AuditResult(run_sync(make), max_error_rate)


def gate(
    report: ReportLike,
    policy: str | Path | Mapping[str, Any] | None = None,
    *,
    baseline: ReportLike | None = None,
    audits: Sequence[str | Path | AuditResult] = (),
    resamples: int = 10_000,
    seed: int = 0,
) -> GateVerdict:
    """Run the release gates on an eval report (a path, an :class:`Evaluation` or a report dict), as
    ``ragaudit gate`` does; ``audits`` are tenant-audit reports (paths or :func:`audit_tenants` results:
    only a clean cross-tenant audit verifies isolation). ``policy``: a ``gates.toml`` path, the same as a dict
    (``{"quality": {"floors": {"nDCG@10": 0.7}}}``), or None for the defaults (no floors, no leak, no
    failed case); an invalid one raises :class:`~ragaudit.errors.ValidationError` naming every problem."""
    from ragaudit.gates.policy import GatePolicy, load_policy, parse_policy
    from ragaudit.gates.verdict import run_gates

    if policy is None:
        the_policy = GatePolicy()
    elif isinstance(policy, Mapping):
        the_policy = parse_policy(policy, "<policy dict>")
    else:
        the_policy = load_policy(policy)
    verdict = run_gates(
        _loaded(report, 0),
        the_policy,
        baseline_path=_loaded(baseline, 1) if baseline is not None else None,
        audit_paths=[
            (f"<audit {i + 1}>", a.to_dict()) if isinstance(a, AuditResult) else a
            for i, a in enumerate(audits)
        ],
        resamples=resamples,
        seed=seed,
    )
    return GateVerdict(verdict)
