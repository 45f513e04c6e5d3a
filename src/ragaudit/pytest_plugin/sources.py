"""The system under test as the session opens it once: the golden set, the source
(``ragaudit_retriever``, or a built-in pipeline over the corpus, by
:func:`ragaudit.pipelines.sources.open_source`), the retriever the tests call (each chunk's owner read
in the corpus, tenant aliases applied) and the corpus's ownership index."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ragaudit.pytest_plugin.session import Session
from ragaudit.pytest_plugin.settings import Settings, usage
from ragaudit.pytest_plugin.tenant_aliases import TenantAliasRetriever

if TYPE_CHECKING:
    from ragaudit.data.schema import Dataset
    from ragaudit.pipelines.sources import OpenedSource
    from ragaudit.retrieval.protocol import Retriever


def relevance_threshold() -> int:
    from ragaudit.metrics.policy import Policy

    return Policy().relevance_threshold


def load_golden(state: Session, settings: Settings) -> Dataset:
    from ragaudit.data.loading import load_dataset

    if not settings.dataset:
        usage(
            "no golden dataset configured; set ragaudit_dataset in the ini file, "
            "@pytest.mark.ragaudit(dataset=...) or --ragaudit-dataset"
        )
    if settings.dataset not in state.datasets:
        state.datasets[settings.dataset] = load_dataset(settings.dataset, threshold=relevance_threshold())
    return state.datasets[settings.dataset]


def opened_source(state: Session, settings: Settings) -> OpenedSource:
    """The session's source for ``settings``: ``ragaudit_retriever`` if set, else the pipeline over the
    corpus (opened once per session by :func:`ragaudit.pipelines.sources.open_source`)."""
    from ragaudit.pipelines.sources import SourceSpec, open_source

    if settings.retriever:
        key: tuple[str, str | None] = (settings.retriever, None)
        spec = SourceSpec(retriever=settings.retriever)
    elif settings.pipeline:
        if not settings.corpus:
            usage(
                f"pipeline {settings.pipeline!r} needs a corpus; set ragaudit_corpus (e.g. demo:corpus.jsonl)"
            )
        key, spec = (settings.pipeline, settings.corpus), SourceSpec(pipeline=settings.pipeline)
    else:
        usage(
            "no retriever configured; set ragaudit_retriever = module:factory, or ragaudit_pipeline "
            "(bm25, dense, hybrid, hybrid-rerank:MODEL.json or a TOML file) with ragaudit_corpus"
        )
    if key not in state.sources:
        corpus = None
        if spec.pipeline and settings.corpus:
            corpus = state.corpus(settings.corpus)
        state.sources[key] = open_source(spec, corpus=corpus)
    return state.sources[key]


def session_retriever(state: Session, settings: Settings) -> Retriever:
    inner = opened_source(state, settings).retriever
    if settings.corpus:  # who owns a chunk comes from the corpus, never from the label the retriever attaches
        inner = corpus_labeled(state, settings, inner)
    return TenantAliasRetriever(inner, dict(settings.tenant_aliases)) if settings.tenant_aliases else inner


def corpus_labeled(state: Session, settings: Settings, inner: Retriever) -> Retriever:
    from ragaudit.security.verified import CorpusLabeledRetriever

    return CorpusLabeledRetriever(inner, ownership_index(state, settings))


def ownership_index(state: Session, settings: Settings) -> Any:
    """The ownership index over the configured corpus (and a built-in pipeline's chunks), once per session."""
    from ragaudit.security.ownership import OwnershipIndex

    corpus_path = str(settings.corpus)
    pipeline = settings.pipeline if settings.pipeline and not settings.retriever else None
    key = (corpus_path, pipeline)
    if key not in state.ownership:
        chunks = opened_source(state, settings).chunks if pipeline else ()
        state.ownership[key] = OwnershipIndex.build(state.corpus(corpus_path).documents, chunks)
    return state.ownership[key]
