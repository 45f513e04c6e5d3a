"""One way to open the retriever a command queries: ``--pipeline/--config``, ``--endpoint``, ``--retriever``
or ``--run``, for every command and the pytest plugin.

:func:`open_source` turns a :class:`SourceSpec` (what the flags say) into an :class:`OpenedSource`: the
retriever, a label for reports, where it came from (``context``: ``{"pipeline": info}``,
``{"endpoint": url}`` with credentials left out, ``{"retriever": "module:factory"}`` or
``{"run": path}``) and, for a built pipeline, its chunks and the dataset with labels projected onto them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.corpus.model import Chunk
from ragaudit.data.loading import RunFormat
from ragaudit.data.schema import Dataset
from ragaudit.errors import InputError
from ragaudit.pipelines.build import BuiltPipeline, ComponentCache, build_pipeline
from ragaudit.pipelines.config import resolve_pipeline
from ragaudit.pipelines.prepare import project_dataset
from ragaudit.retrieval.protocol import Retriever


@dataclass(frozen=True)
class SourceSpec:
    """Where the retrieved lists come from: exactly one of ``pipeline`` (a preset name or TOML file),
    ``endpoint`` (an HTTP service), ``retriever`` (``module:factory``, or ``langchain:``/``llamaindex:``/``haystack:`` before it for a
    framework's retriever) or ``run`` (a run file), plus the
    settings the HTTP client and the vector store need."""

    pipeline: str | None = None
    endpoint: str | None = None
    retriever: str | None = None
    run: str | None = None
    run_format: RunFormat = "auto"
    field_map: Mapping[str, str] | None = None
    results_field: str | None = None
    auth_env: str | None = None
    """The environment variable that holds the ``Authorization`` header (the secret stays there)."""
    endpoint_keys: str | None = None
    """A client keys file (``[tenants] acme = "KEY"``): each tenant's requests carry its own key."""
    timeout_s: float = 30.0
    concurrency: int = 8
    qdrant_url: str | None = None
    tenant_key: str | None = None
    """The metadata key a framework adapter's tenant filter names (``None``: ``tenant_id``)."""


@dataclass
class OpenedSource:
    """A retriever to query, the chunks it indexes (empty when unknown: document ids and content still
    attribute), a label for reports and where it came from."""

    retriever: Retriever
    chunks: list[Chunk]
    label: str
    context: dict[str, Any] = field(default_factory=dict)
    """Where it came from: ``{"pipeline": info}``, ``{"endpoint": url}``, ``{"retriever": spec}``, ``{"run": path}``."""
    pipeline: BuiltPipeline | None = None
    """The built pipeline (``None`` for other sources)."""
    corpus: Corpus | None = None
    """The corpus a pipeline was built over."""

    def provenance(self) -> dict[str, Any]:
        """What an eval report records about the source: the pipeline and corpus (a pipeline whose first
        stage is your own retriever may come without a corpus), else ``{"source": ...}``."""
        if self.pipeline is not None:
            corpus = {"corpus": self.corpus.info()} if self.corpus is not None else {}
            return {"pipeline": self.pipeline.info(), **corpus}
        return {"source": dict(self.context)}

    def scored_on(self, dataset: Dataset, threshold: int = 1) -> Dataset:
        """The dataset to score on: labels projected onto a pipeline's chunks (at relevance ``threshold``),
        else ``dataset`` itself."""
        return project_dataset(dataset, self.pipeline, threshold) if self.pipeline is not None else dataset


def open_source(
    spec: SourceSpec,
    *,
    corpus: Corpus | str | None = None,
    dataset: Dataset | None = None,
    cache: ComponentCache | None = None,
) -> OpenedSource:
    """Open the retriever ``spec`` names.

    A pipeline is built over ``corpus`` (required, except for a first stage of your own, which keeps its
    own index; :meth:`OpenedSource.scored_on` projects a dataset's labels onto its chunks). A run file replays through the retriever protocol and needs ``dataset``
    (queries are matched to cases by text and tenant).
    """
    if spec.pipeline:
        config = resolve_pipeline(spec.pipeline)
        if spec.tenant_key:
            raise InputError(
                "--tenant-key",
                None,
                "--tenant-key is for --retriever; a pipeline file says it in its [retriever] table",
                'drop --tenant-key and write tenant_key = "..." under [retriever] (docs/pipelines.md)',
            )
        the_corpus = corpus if isinstance(corpus, Corpus) or corpus is None else load_corpus(corpus)
        built = build_pipeline(config, the_corpus, cache=cache, qdrant_url=spec.qdrant_url)
        info = {"pipeline": built.info()}
        return OpenedSource(built.retriever, built.chunks, config.name, info, built, the_corpus)
    if spec.endpoint:
        from ragaudit.retrieval.http import HttpRetriever, display_url, endpoint_name

        retriever = HttpRetriever(
            spec.endpoint,
            field_map=spec.field_map or None,
            results_path=spec.results_field,
            auth_header_env=spec.auth_env,
            timeout_s=spec.timeout_s,
            max_connections=spec.concurrency,
            tenant_keys=spec.endpoint_keys,
        )
        name = endpoint_name(spec.endpoint)
        return OpenedSource(retriever, [], name, {"endpoint": display_url(spec.endpoint)})
    if spec.retriever:
        from ragaudit.retrieval.adapters import DEFAULT_TENANT_KEY, adapter_name, load_adapter
        from ragaudit.retrieval.plugin import load_plugin

        if adapter_name(spec.retriever):
            loaded = load_adapter(spec.retriever, tenant_key=spec.tenant_key or DEFAULT_TENANT_KEY)
        elif spec.tenant_key:
            raise InputError(
                "--tenant-key",
                None,
                f"--tenant-key is for a framework's retriever; {spec.retriever!r} is a plain plugin",
                "drop --tenant-key (your search() filters by tenant itself), or name the framework: "
                f"langchain:{spec.retriever}, llamaindex:..., haystack:...",
            )
        else:
            loaded = load_plugin(spec.retriever)
        return OpenedSource(loaded, [], spec.retriever, {"retriever": spec.retriever})
    if spec.run:
        from ragaudit.data.loading import load_run
        from ragaudit.retrieval.replay import RunReplayRetriever

        if dataset is None:
            raise InputError(spec.run, None, "replaying a run needs the dataset", "add --dataset FILE")
        run = load_run(spec.run, spec.run_format)
        return OpenedSource(RunReplayRetriever(run, dataset.cases), [], run.name, {"run": spec.run})
    raise InputError(
        "source",
        None,
        "no retrieval source given",
        "add --pipeline NAME, --config FILE, --endpoint URL, --retriever module:factory or --run FILE",
    )
