"""Chunking sweep: one pipeline over a grid of chunkings, every point scored against span evidence.

Labels that name chunk ids are tied to one chunking, so a sweep needs labels that survive a change
of chunking: ``evidence`` spans (``doc_id``, ``start``, ``end``, ``grade``, character offsets into the
document). At every grid point the corpus is re-chunked and the spans are projected onto the new
chunks by :func:`ragaudit.corpus.projection.project_cases`: a chunk that overlaps a span is relevant,
with the span's grade (the highest, if it overlaps several). The same projection is used for every
point, the ``whole`` strategy included, so all points are scored by one rule.

What each point reports:

* the ranking metrics asked for (``R@k``, ``nDCG@k``, ...) over the projected chunk labels. Note what
  they measure: a span cut into two chunks makes two relevant chunks, so chunk-level recall asks for
  both; smaller chunks are penalised for splitting evidence, larger ones for diluting it
  (precision);
* token-level precision, recall and IoU of the top-``context_k`` retrieved text against the evidence
  (:func:`ragaudit.corpus.projection.token_overlap`: character intervals merged per document, so
  overlapping windows count once). A case that failed retrieves nothing (precision 0, recall 0,
  IoU 0). Means over the answerable cases;
* how many evidence spans are split across chunk boundaries (some chunk overlaps the span, none
  contains it: :func:`ragaudit.corpus.projection.span_split_count`). Spans are first trimmed of
  whitespace at their ends (:func:`trim_evidence`), since chunks never start or end in whitespace;
* the index: chunks, tokens indexed (:func:`ragaudit.corpus.chunkers.count_tokens` of title + text),
  characters indexed relative to the corpus (overlap makes it exceed 1), build seconds, and for dense
  retrievers the embedding seconds and how many chunk texts were embedded versus read from the
  embedding cache (unchanged chunk texts are never embedded twice, across points and runs);
* query latency (p50 / p95; the first case is sent once, untimed, before each point), and the paired
  difference on the primary metric against the best point (randomization test, Holm-corrected
  across the points).

A BEIR dataset has document-level qrels only; :func:`load_span_dataset` turns every judged document
with grade > 0 into a whole-document span (as ``ragaudit import beir`` does), which makes a sweep
measure how well a chunking keeps each relevant document findable.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ragaudit.artifacts.envelope import envelope, utc_timestamp, write_artifact
from ragaudit.artifacts.in_sample import first_in_sample
from ragaudit.corpus.chunkers import count_tokens
from ragaudit.corpus.loading import Corpus
from ragaudit.corpus.model import Chunk
from ragaudit.corpus.projection import group_by_doc, project_cases, span_split_count, token_overlap
from ragaudit.data.beir import load_beir
from ragaudit.data.loading import DatasetFormat, detect_dataset_format, load_dataset
from ragaudit.data.run import Run
from ragaudit.data.schema import Dataset, Evidence
from ragaudit.errors import InputError, Problem, ValidationError
from ragaudit.evaluation.compare import LoadedReport, compare_reports
from ragaudit.evaluation.evaluate import evaluate
from ragaudit.evaluation.live import RunOptions
from ragaudit.evaluation.result import EvalResult
from ragaudit.metrics.names import MetricSpec
from ragaudit.metrics.policy import Policy
from ragaudit.pipelines.build import BuiltPipeline, ComponentCache, build_pipeline
from ragaudit.pipelines.config import CHUNKING_STRATEGIES, ChunkingConfig, PipelineConfig
from ragaudit.pipelines.distribute import prepare_distributed
from ragaudit.runner.executor import Executor, LocalExecutor

SPAN_FIX = (
    'add "evidence": [{"doc_id": "...", "start": 0, "end": 120, "grade": 3}] to every answerable case '
    "(character offsets into the document's text; see docs/datasets.md), or import a BEIR folder with "
    "'ragaudit import beir DIR --out OUT', which adds whole-document spans"
)


# ------------------------------------------------------------------------------------------ inputs


def chunking_grid(
    strategies: Sequence[str], sizes: Sequence[int], overlaps: Sequence[int]
) -> tuple[list[ChunkingConfig], list[str]]:
    """Every (strategy, size, overlap) point, and a note for each combination left out.

    ``whole`` is one point whatever the sizes; an overlap not below the size is left out.
    Raises :class:`InputError` on an unknown strategy, a size below 1 or a negative overlap.
    """
    for name in strategies:
        if name not in CHUNKING_STRATEGIES:
            raise InputError(
                "--strategies",
                None,
                f"unknown strategy {name!r}",
                f"use some of: {', '.join(CHUNKING_STRATEGIES)}",
            )
    if any(s < 1 for s in sizes):
        raise InputError(
            "--sizes", None, f"sizes must be positive token counts (got {list(sizes)})", "e.g. 128,256"
        )
    if any(o < 0 for o in overlaps):
        raise InputError(
            "--overlaps", None, f"overlaps must be 0 or more (got {list(overlaps)})", "e.g. 0,64"
        )
    points: list[ChunkingConfig] = []
    skipped: list[str] = []
    for strategy in dict.fromkeys(strategies):
        if strategy == "whole":
            points.append(ChunkingConfig("whole"))
            continue
        for size in dict.fromkeys(sizes):
            for overlap in dict.fromkeys(overlaps):
                if overlap >= size:
                    skipped.append(f"{strategy}-{size}-{overlap}: overlap {overlap} is not below size {size}")
                else:
                    points.append(ChunkingConfig(strategy, size, overlap))
    if not points:
        raise InputError("--sizes", None, "the grid is empty", "give at least one size above every overlap")
    return points, skipped


def point_name(chunking: ChunkingConfig) -> str:
    c = chunking
    return "whole" if c.strategy == "whole" else f"{c.strategy}-{c.size}-{c.overlap}"


def load_span_dataset(
    path: str | Path, fmt: DatasetFormat, split: str, threshold: int, corpus: Corpus
) -> Dataset:
    """Load a dataset for a sweep; a BEIR folder gets whole-document evidence spans from ``corpus``."""
    kind = detect_dataset_format(path) if fmt == "auto" else fmt
    if kind == "beir":
        lengths = {d.doc_id: len(d.text) for d in corpus.documents}
        return load_beir(path, split, threshold, lengths)
    return load_dataset(path, kind, split, threshold)


def require_span_labels(dataset: Dataset, corpus: Corpus, threshold: int = 1) -> None:
    """Refuse a dataset a sweep cannot score: answerable cases without spans, or spans off the corpus."""
    answerable = [c for c in dataset.cases if c.is_answerable(threshold)]
    bare = [c for c in answerable if not c.evidence]
    if bare:
        first = bare[0]
        what = (
            "no case has evidence spans, only chunk/document-id labels"
            if len(bare) == len(answerable)
            else f"{len(bare)} of {len(answerable)} answerable cases have no evidence spans (first: {first.id!r})"
        )
        raise InputError(
            dataset.path,
            first.line,
            f"the chunking sweep scores chunks by their overlap with evidence spans, and {what}; "
            "chunk-id labels name the chunks of one chunking and cannot score another",
            SPAN_FIX,
        )
    problems: list[Problem] = []
    for case in dataset.cases:
        for span in case.evidence:
            doc = corpus.by_id.get(span.doc_id)
            if doc is None:
                problems.append(
                    Problem(
                        dataset.path,
                        case.line,
                        f"case {case.id!r}: evidence document {span.doc_id!r} is not in the corpus {corpus.path}",
                        "fix the doc_id or use the corpus the spans were labelled on",
                    )
                )
            elif not 0 <= span.start < span.end <= len(doc.text):
                problems.append(
                    Problem(
                        dataset.path,
                        case.line,
                        f"case {case.id!r}: evidence span {span.start}..{span.end} is outside document "
                        f"{span.doc_id!r} ({len(doc.text)} characters)",
                        "offsets are character positions into the document's text, start < end <= length",
                    )
                )
    if problems:
        raise ValidationError(problems)


def trim_evidence(dataset: Dataset, corpus: Corpus) -> Dataset:
    """``dataset`` with every evidence span shrunk to exclude whitespace at its ends.

    Chunkers trim whitespace off their chunks, so a span that starts or ends in whitespace (a
    whole-document span over a text ending in a newline) would never lie inside one chunk and would
    count as split, and its whitespace as evidence no chunk can return. A span of whitespace only is
    kept as it is.
    """

    def trimmed(span: Evidence) -> Evidence:
        doc = corpus.by_id.get(span.doc_id)
        if doc is None:
            return span
        piece = doc.text[span.start : span.end]
        body = piece.strip()
        if not body or body == piece:
            return span
        start = span.start + (len(piece) - len(piece.lstrip()))
        return replace(span, start=start, end=start + len(body))

    cases = tuple(replace(c, evidence=tuple(trimmed(e) for e in c.evidence)) for c in dataset.cases)
    return replace(dataset, cases=cases)


# ------------------------------------------------------------------------------------------ measuring


@dataclass(frozen=True)
class TokenScores:
    """Mean token-level precision, recall and IoU of the top-k retrieved text (answerable cases)."""

    precision: float
    recall: float
    iou: float
    k: int

    def to_json(self) -> dict[str, Any]:
        return {"k": self.k, "precision": self.precision, "recall": self.recall, "iou": self.iou}


def _mean(values: Iterable[float]) -> float:
    finite = [v for v in values if not math.isnan(v)]
    return sum(finite) / len(finite) if finite else math.nan


def token_scores(scored: Dataset, run: Run, chunks: Sequence[Chunk], k: int, threshold: int) -> TokenScores:
    """:func:`token_overlap` of each answerable case's top-``k`` chunks with its evidence, averaged."""
    by_id = {c.chunk_id: c for c in chunks}
    rows = []
    for case in scored.cases:
        if not case.is_answerable(threshold):
            continue
        case_run = run.cases.get(case.id)
        items = case_run.items[:k] if case_run is not None and case_run.error is None else []
        retrieved = [by_id[item.chunk_id] for item in items if item.chunk_id in by_id]
        rows.append(token_overlap(retrieved, case.evidence))
    return TokenScores(
        _mean(r.precision for r in rows), _mean(r.recall for r in rows), _mean(r.iou for r in rows), k
    )


def _dense_parts(retriever: object, depth: int = 0) -> list[Any]:
    """The dense retrievers inside a stage chain or a hybrid (anything with ``timings`` and ``encoder``)."""
    if depth > 16 or retriever is None:
        return []
    if isinstance(getattr(retriever, "timings", None), dict) and hasattr(retriever, "encoder"):
        return [retriever]
    found = _dense_parts(getattr(retriever, "base", None), depth + 1)
    for part in getattr(retriever, "retrievers", ()) or ():
        found += _dense_parts(part, depth + 1)
    return found


def index_stats(
    built: BuiltPipeline, corpus: Corpus, embedding_counts: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """Size of the index and what building it cost (embedding figures only for dense retrievers).

    Read right after the build, before any query, so query embeddings are not counted.
    ``embedding_counts`` (``embedded``, ``cached``) replaces the encoders' own counts when the texts
    were embedded ahead of the build by another executor (:mod:`ragaudit.pipelines.distribute`).
    """
    chunks = built.chunks
    tokens = sum(count_tokens(c.index_text) for c in chunks)
    corpus_chars = sum(len(d.text) for d in corpus.documents)
    out: dict[str, Any] = {
        "chunks": len(chunks),
        "tokens": tokens,
        "mean_chunk_tokens": tokens / len(chunks) if chunks else 0.0,
        "characters": sum(len(c.text) for c in chunks),
        "characters_vs_corpus": sum(len(c.text) for c in chunks) / corpus_chars if corpus_chars else math.nan,
        "build_seconds": round(built.build_seconds, 4),
        "embed_seconds": None,
        "embedded_texts": None,
        "cached_texts": None,
        "vector_bytes": None,
    }
    dense = _dense_parts(built.retriever)
    if dense:
        out["embed_seconds"] = round(sum(float(d.timings.get("embed_s", 0.0)) for d in dense), 4)
        out["embedded_texts"] = sum(int(getattr(d.encoder, "misses", 0)) for d in dense)
        out["cached_texts"] = sum(int(getattr(d.encoder, "hits", 0)) for d in dense)
        if embedding_counts is not None:
            out["embedded_texts"] = embedding_counts["embedded"]
            out["cached_texts"] = embedding_counts["cached"]
        out["vector_bytes"] = sum(
            int(d.chunks_indexed) * int(getattr(d.encoder, "dim", 0)) * 4 for d in dense
        )
    return out


def split_stats(dataset: Dataset, chunks: Sequence[Chunk]) -> dict[str, Any]:
    """Evidence spans in chunked documents, and how many of them no single chunk contains."""
    by_doc = group_by_doc(chunks)
    total = sum(1 for case in dataset.cases for span in case.evidence if span.doc_id in by_doc)
    split = sum(span_split_count(case, by_doc) for case in dataset.cases)
    return {"spans": total, "split": split, "split_rate": split / total if total else math.nan}


# ------------------------------------------------------------------------------------------ result


@dataclass
class SweepPoint:
    name: str
    chunking: ChunkingConfig
    result: EvalResult
    tokens: TokenScores
    spans: dict[str, Any]
    index: dict[str, Any]

    def to_json(self) -> dict[str, Any]:
        c = self.chunking
        return {
            "name": self.name,
            "chunking": {"strategy": c.strategy, "size": c.size, "overlap": c.overlap},
            "metrics": self.result.metrics,
            "token_level": self.tokens.to_json(),
            "spans": self.spans,
            "index": self.index,
            "latency_ms": self.result.latency(),
            "counts": self.result.counts.__dict__,
        }


@dataclass
class SweepResult:
    """Every grid point, the best one on the primary metric, and the paired comparisons against it."""

    dataset: Dataset
    corpus: Corpus
    policy: Policy
    pipeline: PipelineConfig
    points: list[SweepPoint]
    comparison: dict[str, Any]
    primary_metric: str
    best: str
    top_k: int
    context_k: int
    skipped: list[str] = field(default_factory=list)
    pipeline_info: dict[str, Any] = field(default_factory=dict)
    """The first point's pipeline info (name, models); ``config_sha256`` is the base config's."""
    created_at: str = field(default_factory=utc_timestamp)
    executor: dict[str, Any] | None = None
    """Where the points ran (``--executor ray``: the cluster); ``None`` for a local run."""

    def versus_best(self, name: str) -> dict[str, Any] | None:
        return next((c for c in self.comparison.get("comparisons", []) if c["system"] == name), None)

    def to_dict(self) -> dict[str, Any]:
        swept = {k: v for k, v in self.pipeline.to_dict().items() if k not in ("name", "chunking")}
        sha = self.pipeline.sha256()
        return {
            **envelope(
                "chunking-sweep",
                created_at=self.created_at,
                dataset=self.dataset.info(),
                policy=self.policy.to_dict(),
                context={
                    "pipeline": {**self.pipeline_info, "config_sha256": sha},
                    "corpus": self.corpus.info(),
                    "retrieval": {"top_k": self.top_k},
                    "executor": self.executor,
                },
            ),
            "dataset": self.dataset.info(),
            "policy": self.policy.to_dict(),
            "corpus": self.corpus.info(),
            "pipeline": {"name": self.pipeline.name, "config": swept, "config_sha256": sha},
            "labels": "evidence spans projected onto each chunking (a chunk overlapping a span has its grade)",
            "retrieval": {"top_k": self.top_k},
            "context_k": self.context_k,
            "primary_metric": self.primary_metric,
            "best": self.best,
            "skipped": self.skipped,
            "points": [{**p.to_json(), "versus_best": self.versus_best(p.name)} for p in self.points],
            "comparisons": self.comparison.get("comparisons", []),
            **first_in_sample((f"chunking {p.name}", p.result.context) for p in self.points),
        }

    def write_json(self, path: str | Path) -> None:
        """The artifact as strict JSON (an undefined value, NaN, is written as ``null``)."""
        write_artifact(self.to_dict(), path)


# ------------------------------------------------------------------------------------------ running


@dataclass(frozen=True)
class _SweepShared:
    """What every point reads (shipped once to a Ray cluster)."""

    dataset: Dataset
    corpus: Corpus
    config: PipelineConfig
    specs: tuple[MetricSpec, ...]
    policy: Policy
    options: RunOptions
    context_k: int
    qdrant_url: str | None
    cache: ComponentCache


@dataclass(frozen=True)
class _SweepCell:
    chunking: ChunkingConfig
    embedding_counts: dict[str, int] | None = None


async def _sweep_point(shared: _SweepShared, cell: _SweepCell) -> tuple[SweepPoint, dict[str, Any]]:
    """Build, run and score one grid point; also the pipeline's models (the first point's are reported)."""
    from ragaudit.runner.execute import run_cases, warm_up

    options, dataset, corpus = shared.options, shared.dataset, shared.corpus
    threshold = shared.policy.relevance_threshold
    name = point_name(cell.chunking)
    point_config = _point_config(shared.config, cell.chunking)
    built = build_pipeline(point_config, corpus, cache=shared.cache, qdrant_url=shared.qdrant_url)
    index = index_stats(built, corpus, cell.embedding_counts)
    scored = replace(dataset, cases=project_cases(dataset.cases, built.chunks, threshold))
    await warm_up(built.retriever, scored.cases, options.default_tenant, options.top_k)
    run = await run_cases(
        built.retriever,
        scored.cases,
        options.top_k,
        default_tenant=options.default_tenant,
        concurrency=options.concurrency,
        timeout_s=options.timeout_s,
        name=point_config.name,
        progress=options.progress,
    )
    context = {"retrieval": {"top_k": options.top_k}, "pipeline": built.info(), "corpus": corpus.info()}
    result = evaluate(scored, run, shared.specs, shared.policy, context)
    point = SweepPoint(
        name,
        cell.chunking,
        result,
        token_scores(scored, run, built.chunks, shared.context_k, threshold),
        split_stats(dataset, built.chunks),
        index,
    )
    return point, built.models


def _point_config(config: PipelineConfig, chunking: ChunkingConfig) -> PipelineConfig:
    return replace(config, name=f"{config.name}@{point_name(chunking)}", chunking=chunking)


async def sweep_chunking(
    dataset: Dataset,
    corpus: Corpus,
    config: PipelineConfig,
    grid: Sequence[ChunkingConfig],
    specs: tuple[MetricSpec, ...],
    policy: Policy,
    options: RunOptions,
    *,
    context_k: int = 5,
    skipped: Sequence[str] = (),
    resamples: int = 10_000,
    seed: int = 0,
    qdrant_url: str | None = None,
    report_dir: str | Path | None = None,
    executor: Executor | None = None,
) -> SweepResult:
    """Evaluate ``config`` at every chunking of ``grid`` (see the module docstring).

    The first metric of ``specs`` is the primary one (it picks the best point). ``report_dir`` also
    writes each point's eval report (``<point>.json``) for ``ragaudit compare``. ``executor`` runs
    the points (default: one after another in this process); on Ray each point is one task, the
    chunk embeddings are computed first by Ray Data actors (:mod:`ragaudit.pipelines.distribute`),
    and the result's provenance names the executor and the cluster.
    """
    if not specs:
        raise InputError("--metrics", None, "no metrics given", "e.g. --metrics R@5,nDCG@10")
    threshold = policy.relevance_threshold
    require_span_labels(dataset, corpus, threshold)
    dataset = trim_evidence(dataset, corpus)
    runner = executor if executor is not None else LocalExecutor()
    cache = ComponentCache()
    cells = [_SweepCell(chunking) for chunking in grid]
    provenance: dict[str, Any] | None = None
    if runner.name != "local":
        remote = prepare_distributed(
            [_point_config(config, c) for c in grid], corpus, runner, cache, qdrant_url
        )
        cells = [_SweepCell(c, counts) for c, counts in zip(grid, remote.prefill.cells, strict=True)]
        provenance = remote.provenance
    shared = _SweepShared(dataset, corpus, config, specs, policy, options, context_k, qdrant_url, cache)
    outputs = await runner.map(_sweep_point, shared, cells)
    points = [point for point, _ in outputs]
    first_info: dict[str, Any] = {"name": config.name, "models": outputs[0][1]} if outputs else {}
    if report_dir is not None:
        for point in points:
            point.result.write_json(Path(report_dir) / f"{point.name}.json")
    primary = specs[0].name
    best = max(points, key=lambda p: (_finite(p.result.metrics[primary]), -points.index(p)))
    loaded = {p.name: LoadedReport(p.name, f"<{p.name}>", p.result.to_dict()) for p in points}
    comparison = (
        compare_reports(
            [loaded[best.name], *(loaded[p.name] for p in points if p is not best)],
            loaded[best.name],
            metrics=[primary],
            n_resamples=resamples,
            seed=seed,
        )
        if len(points) > 1
        else {}
    )
    return SweepResult(
        dataset,
        corpus,
        policy,
        config,
        points,
        comparison,
        primary,
        best.name,
        options.top_k,
        context_k,
        list(skipped),
        first_info,
        executor=provenance,
    )


def _finite(value: float) -> float:
    return value if not math.isnan(value) else -math.inf
