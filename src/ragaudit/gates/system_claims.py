"""Whether the system an eval report and a tenant audit name is backed by their own records.

The gate ties an ``--audit`` to the eval report through the system both name (a pipeline's config
sha256, an endpoint, a retriever) and the corpus sha256 (:mod:`ragaudit.gates.audit_tie`). A name is a
string: a report whose ``config_sha256`` was swapped for the audited system's would pass the tie. So
what a pipeline's name rests on is checked too:

* its ``config_sha256`` is the sha256 of the ``config`` written beside it (as
  :meth:`ragaudit.pipelines.config.PipelineConfig.sha256` computes it: the config without its name,
  canonical JSON), in the report and in the audit;
* the report and the audit built as many chunks (``chunks``): the same config over the same corpus
  builds the same chunks;
* every chunk id the report's cases retrieved is one the config's chunking makes over the corpus,
  when the corpus is still at the path the report names, with the same sha256, and has at most
  :data:`RECHUNK_LIMIT` documents (a report of 24-token chunks under a whole-document config).

A careful forger who copies the whole ``pipeline`` block of the audited system into the report of
another system with the same chunking (BM25 and dense over whole documents) still passes; an endpoint
or a retriever is tied by its name and the corpus sha256 alone, unless the audit was made with
``--golden`` and its rankings are compared (:mod:`ragaudit.gates.ranking_tie`; docs/gates.md says so).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

RECHUNK_LIMIT = 20_000
"""The largest corpus (documents) the gate re-chunks to check the report's retrieved chunk ids."""


def _pipeline(data: Mapping[str, Any]) -> Mapping[str, Any] | None:
    source = data.get("source")
    for holder in (data.get("pipeline"), source.get("pipeline") if isinstance(source, Mapping) else None):
        if isinstance(holder, Mapping) and isinstance(holder.get("config_sha256"), str):
            return holder
    return None


def config_sha256(config: Mapping[str, Any]) -> str:
    """The sha256 a pipeline config is named by (its name excluded, canonical JSON)."""
    body = {k: v for k, v in config.items() if k != "name"}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def _unbacked(data: Mapping[str, Any], which: str) -> str | None:
    pipeline = _pipeline(data)
    config = pipeline.get("config") if pipeline is not None else None
    if pipeline is None or not isinstance(config, Mapping):
        return None
    if config_sha256(config) != pipeline["config_sha256"]:
        return (
            f"{which}'s pipeline config_sha256 {str(pipeline['config_sha256'])[:16]} is not the sha256 of the "
            f"config written beside it ({config_sha256(config)[:16]}): the system it names was edited"
        )
    return None


def _count(pipeline: Mapping[str, Any] | None) -> int | None:
    value = pipeline.get("chunks") if pipeline is not None else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _retrieved_ids(report: Mapping[str, Any]) -> set[str]:
    ids: set[str] = set()
    cases = report.get("per_case")
    for case in cases if isinstance(cases, list) else []:
        retrieved = case.get("retrieved") if isinstance(case, Mapping) else None
        for item in retrieved if isinstance(retrieved, list) else []:
            chunk = item.get("chunk_id") if isinstance(item, Mapping) else item
            if isinstance(chunk, str):
                ids.add(chunk)
    return ids


def _foreign_chunk_ids(report: Mapping[str, Any]) -> str | None:
    """Chunk ids the report retrieved that its pipeline config's chunking does not make over its corpus
    (``None``: none, or the corpus cannot be re-chunked here)."""
    from ragaudit.artifacts.provenance import sha256_of
    from ragaudit.corpus.chunkers import chunk_corpus, make_chunker
    from ragaudit.corpus.loading import load_corpus
    from ragaudit.errors import RagauditError

    pipeline, corpus = _pipeline(report), report.get("corpus")
    config = pipeline.get("config") if pipeline is not None else None
    chunking = config.get("chunking") if isinstance(config, Mapping) else None
    if not isinstance(chunking, Mapping) or not isinstance(corpus, Mapping):
        return None
    path, sha, documents = corpus.get("path"), corpus.get("sha256"), corpus.get("documents")
    if not isinstance(path, str) or not isinstance(documents, int) or documents > RECHUNK_LIMIT:
        return None
    try:
        if not Path(path).is_file() or sha256_of(path) != sha:
            return None
        chunker = make_chunker(
            str(chunking.get("strategy")), int(chunking.get("size", 256)), int(chunking.get("overlap", 0))
        )
        made = {c.chunk_id for c in chunk_corpus(load_corpus(path), chunker)}
    except (OSError, ValueError, TypeError, RagauditError):
        return None
    foreign = sorted(_retrieved_ids(report) - made)
    if not foreign:
        return None
    return (
        f"{len(foreign)} chunk id(s) the eval report's cases retrieved are not made by the chunking its "
        f"pipeline config names ({chunking.get('strategy')}, size {chunking.get('size')}) over its corpus: "
        f"{', '.join(foreign[:3])}{' ...' if len(foreign) > 3 else ''}; its figures are of another system"
    )


def system_claim_problem(report: Mapping[str, Any], audit: Mapping[str, Any]) -> str | None:
    """Why the pipeline the report and the audit both name is not backed by their records (``None``:
    it is, or they name no pipeline config to check)."""
    for data, which in ((report, "the eval report"), (audit, "the audit")):
        if why := _unbacked(data, which):
            return why
    mine, theirs = _count(_pipeline(report)), _count(_pipeline(audit))
    if mine is not None and theirs is not None and mine != theirs:
        return (
            f"the eval report's pipeline built {mine:,} chunks and the audit's {theirs:,}: the same config over "
            "the same corpus builds the same chunks, so they did not run the same system"
        )
    return _foreign_chunk_ids(report)
