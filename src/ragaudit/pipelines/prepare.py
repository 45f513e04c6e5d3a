"""Everything a pipeline evaluation needs before the first query: corpus, chunks, labels, indexes."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ragaudit.corpus.chunkers import chunk_corpus, make_chunker
from ragaudit.corpus.loading import Corpus, load_corpus
from ragaudit.corpus.model import Chunk
from ragaudit.corpus.projection import project_cases
from ragaudit.data.schema import Dataset
from ragaudit.pipelines.build import BuiltPipeline, ComponentCache, build_pipeline
from ragaudit.pipelines.config import PipelineConfig


@dataclass
class PreparedPipeline:
    dataset: Dataset
    """The dataset with its labels projected onto this pipeline's chunks (unchanged for whole documents)."""
    pipeline: BuiltPipeline
    corpus: Corpus

    def context(self) -> dict[str, Any]:
        return {"pipeline": self.pipeline.info(), "corpus": self.corpus.info()}

    def owned_chunks(self) -> list[Chunk]:
        """The chunks whose owners the corpus vouches for by id and content: the pipeline's own; for a
        retriever of your own (it keeps its own index) the corpus's documents, whole: its results are
        attributed when they are whole documents under their ids, anything else stays unverified (``eval``
        attributes those by content as well, through the tenant audit's corpus index)."""
        if not self.pipeline.external:
            return self.pipeline.chunks
        return chunk_corpus(self.corpus, make_chunker("whole"))


def project_dataset(dataset: Dataset, pipeline: BuiltPipeline, threshold: int) -> Dataset:
    if pipeline.config.chunking.strategy == "whole":
        return dataset
    return replace(dataset, cases=project_cases(dataset.cases, pipeline.chunks, threshold))


def prepare_pipeline(
    dataset: Dataset,
    corpus: Corpus | str,
    config: PipelineConfig,
    *,
    threshold: int = 1,
    cache: ComponentCache | None = None,
    qdrant_url: str | None = None,
) -> PreparedPipeline:
    """Load the corpus (if given by path), build the pipeline over it, and project the labels."""
    the_corpus = corpus if isinstance(corpus, Corpus) else load_corpus(corpus)
    built = build_pipeline(config, the_corpus, cache=cache, qdrant_url=qdrant_url)
    return PreparedPipeline(project_dataset(dataset, built, threshold), built, the_corpus)
