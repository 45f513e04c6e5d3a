"""Where the retrieved lists come from, whichever way they were retrieved: a pipeline built over the
corpus, a run file, or an eval report. Each gives an eval report (the ``ragaudit eval --out`` shape)
whose ``per_case[].retrieved`` lists are the rankings, plus the corpus chunking that gives their text.

The chunking must be the one the ids refer to: a pipeline knows its own; an eval report made from a
pipeline records it (``pipeline.config.chunking``); otherwise say it (``whole`` by default, so ids are
document ids). Labels are projected onto that chunking exactly as ``ragaudit eval`` does for pipelines.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ragaudit.context.assemble import ChunkLookup
from ragaudit.corpus.loading import Corpus
from ragaudit.corpus.projection import project_cases
from ragaudit.data.run import Run
from ragaudit.data.schema import Dataset
from ragaudit.errors import InputError
from ragaudit.metrics.policy import Policy


@dataclass
class RetrievalSource:
    """An eval report with its dataset (labels in the chunking's ids) and the chunk texts."""

    report: dict[str, Any]
    dataset: Dataset
    lookup: ChunkLookup
    corpus: Corpus
    notes: list[str]

    def entries(self) -> dict[str, dict[str, Any]]:
        """The report's per-case entries by case id."""
        return {str(e.get("id")): e for e in self.report.get("per_case", []) if isinstance(e, dict)}

    @staticmethod
    def ranked(entry: Mapping[str, Any] | None) -> list[tuple[str, float | None]]:
        """``(chunk_id, score)`` in rank order from a per-case entry (empty when absent or failed)."""
        if entry is None:
            return []
        out: list[tuple[str, float | None]] = []
        for item in entry.get("retrieved") or []:
            if isinstance(item, dict) and isinstance(item.get("chunk_id"), str):
                score = item.get("score")
                out.append((item["chunk_id"], float(score) if isinstance(score, (int, float)) else None))
        return out


def parse_chunking(spec: str) -> tuple[str, int, int]:
    """``whole`` or ``STRATEGY[:SIZE[:OVERLAP]]`` (e.g. ``recursive:256:32``) -> (strategy, size, overlap)."""
    parts = spec.split(":")
    try:
        size = int(parts[1]) if len(parts) > 1 else 256
        overlap = int(parts[2]) if len(parts) > 2 else 0
    except ValueError:
        size = overlap = -1
    if len(parts) > 3 or size <= 0 or overlap < 0 or not parts[0]:
        raise InputError(
            "--chunking",
            None,
            f"cannot read {spec!r}",
            "write whole or STRATEGY[:SIZE[:OVERLAP]], e.g. recursive:256:0",
        )
    return parts[0], size, overlap


def lookup_for(corpus: Corpus, chunking: str) -> ChunkLookup:
    strategy, size, overlap = parse_chunking(chunking)
    return ChunkLookup.for_corpus(corpus, strategy, size, overlap)


def project_onto(dataset: Dataset, lookup: ChunkLookup, threshold: int) -> Dataset:
    """The dataset with labels in the lookup's chunk ids (unchanged for whole documents)."""
    if lookup.chunking == "whole":
        return dataset
    return replace(dataset, cases=project_cases(dataset.cases, lookup.chunks, threshold))


def from_run(
    dataset: Dataset, corpus: Corpus, run: Run, policy: Policy, chunking: str = "whole"
) -> RetrievalSource:
    """Score ``run`` like ``ragaudit eval --run`` and keep its rankings."""
    from ragaudit.evaluation.evaluate import evaluate

    lookup = lookup_for(corpus, chunking)
    projected = project_onto(dataset, lookup, policy.relevance_threshold)
    result = evaluate(projected, run, None, policy, {"corpus": corpus.info()})
    return RetrievalSource(result.to_dict(), projected, lookup, corpus, [])


def _report_chunking(report: Mapping[str, Any]) -> str | None:
    pipeline = report.get("pipeline")
    config = pipeline.get("config") if isinstance(pipeline, Mapping) else None
    chunking = config.get("chunking") if isinstance(config, Mapping) else None
    if not isinstance(chunking, Mapping) or not isinstance(chunking.get("strategy"), str):
        return None
    if chunking["strategy"] == "whole":
        return "whole"
    return f"{chunking['strategy']}:{chunking.get('size', 256)}:{chunking.get('overlap', 0)}"


def from_report(
    dataset: Dataset, corpus: Corpus, path: str | Path, policy: Policy, chunking: str | None = None
) -> RetrievalSource:
    """Take the rankings of an eval report (``ragaudit eval --out``)."""
    from ragaudit.artifacts.envelope import read_report

    report = dict(read_report(Path(path)))
    if "per_case" not in report or "metrics" not in report:
        raise InputError(
            str(path),
            None,
            "not a ragaudit eval report (no per_case / metrics)",
            "pass a report written by 'ragaudit eval --out'",
        )
    notes: list[str] = []
    chosen = chunking or _report_chunking(report) or "whole"
    lookup = lookup_for(corpus, chosen)
    ids = {str(e.get("id")) for e in report.get("per_case", []) if isinstance(e, dict)}
    if not ids & {c.id for c in dataset.cases}:
        raise InputError(
            str(path), None, "the report has no case of this dataset", "pass the report made on --dataset"
        )
    report_sha = report.get("dataset", {}).get("sha256") if isinstance(report.get("dataset"), dict) else None
    if report_sha and report_sha != dataset.sha256:
        notes.append(f"the report was made on another dataset file (sha256 {str(report_sha)[:12]}...)")
    return RetrievalSource(
        report, project_onto(dataset, lookup, policy.relevance_threshold), lookup, corpus, notes
    )


async def from_pipeline(
    dataset: Dataset,
    corpus: Corpus,
    spec: str,
    policy: Policy,
    options: Any,
    qdrant_url: str | None = None,
) -> RetrievalSource:
    """Build the pipeline (a preset name or a TOML file) over ``corpus`` and run every case through it.

    ``options`` is a :class:`ragaudit.evaluation.live.RunOptions`.
    """
    from ragaudit.evaluation.live import evaluate_live
    from ragaudit.metrics.names import DEFAULT_METRICS
    from ragaudit.pipelines.sources import SourceSpec, open_source
    from ragaudit.runner.chunk_owners import PipelineChunkOwnership

    source = open_source(
        SourceSpec(pipeline=spec, qdrant_url=qdrant_url),
        corpus=corpus,
    )
    built = source.pipeline
    if built is None:  # pragma: no cover - open_source builds a pipeline for a pipeline spec
        raise InputError(spec, None, "not a pipeline", "pass a preset name or a pipeline TOML")
    scored_on = source.scored_on(dataset, policy.relevance_threshold)
    c = built.config.chunking
    chunking = "whole" if c.strategy == "whole" else f"{c.strategy}:{c.size}:{c.overlap}"
    lookup = ChunkLookup(source.chunks, corpus, chunking)
    result = await evaluate_live(
        scored_on,
        source.retriever,
        DEFAULT_METRICS,
        policy,
        options,
        name=source.label,
        context=source.provenance(),
        ownership=PipelineChunkOwnership(source.chunks),  # each chunk's tenant by id and content
    )
    return RetrievalSource(result.to_dict(), scored_on, lookup, corpus, [])
