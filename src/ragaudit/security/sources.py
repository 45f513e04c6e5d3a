"""Open the retriever an audit queries: a built pipeline over the corpus, an HTTP service or a plugin."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragaudit.corpus.loading import Corpus
from ragaudit.corpus.model import Chunk
from ragaudit.pipelines.build import ComponentCache
from ragaudit.retrieval.protocol import Retriever


@dataclass
class AuditSource:
    """A retriever to audit, the chunks it indexes (empty when unknown: document ids and content still
    attribute), a label for reports and its provenance."""

    retriever: Retriever
    chunks: list[Chunk]
    label: str
    context: dict[str, Any] = field(default_factory=dict)


def pipeline_source(
    spec: str, corpus: Corpus, *, cache: ComponentCache | None = None, qdrant_url: str | None = None
) -> AuditSource:
    """A preset name or pipeline TOML, built over ``corpus``."""
    from ragaudit.pipelines.build import build_pipeline
    from ragaudit.pipelines.config import resolve_pipeline

    config = resolve_pipeline(spec)
    built = build_pipeline(config, corpus, cache=cache, qdrant_url=qdrant_url)
    return AuditSource(built.retriever, built.chunks, config.name, {"pipeline": built.info()})


def endpoint_source(
    url: str,
    *,
    auth_env: str | None = None,
    field_map: Mapping[str, str] | None = None,
    results_field: str | None = None,
    timeout_s: float = 30.0,
    concurrency: int = 8,
) -> AuditSource:
    """An HTTP retrieval service; the credential stays in the environment variable ``auth_env``."""
    from ragaudit.retrieval.http import HttpRetriever, display_url

    retriever = HttpRetriever(
        url,
        field_map=field_map or None,
        results_path=results_field,
        auth_header_env=auth_env,
        timeout_s=timeout_s,
        max_connections=concurrency,
    )
    return AuditSource(retriever, [], "endpoint", {"endpoint": display_url(url)})


def plugin_source(spec: str) -> AuditSource:
    """A Python retriever given as ``module:factory``."""
    from ragaudit.retrieval.plugin import load_plugin

    return AuditSource(load_plugin(spec), [], spec, {"retriever": spec})
