"""Pipeline stages through one registry: a user's reranker or rewriter (defined here) plugs in like ours."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from conftest import KB
from ragaudit.corpus.loading import load_corpus
from ragaudit.errors import InputError, ValidationError
from ragaudit.pipelines import stages
from ragaudit.pipelines.build import build_pipeline
from ragaudit.pipelines.config import parse_pipeline
from ragaudit.retrieval import learned_fusion, rerankers, rewriters


class KeywordReranker:
    """A user's reranker: scores a text by how many query words it holds, times ``boost``."""

    def __init__(self, boost: float = 1.0) -> None:
        self.boost = boost
        self.name = f"keyword(boost={boost:g})"

    async def score(self, query: str, texts: Sequence[str]) -> list[float]:
        words = set(query.lower().split())
        return [self.boost * len(words & set(t.lower().split())) for t in texts]


class ShoutRewriter:
    """A user's rewriter that sees the pipeline's retriever (it takes a ``retriever`` parameter)."""

    def __init__(self, retriever: object, suffix: str = "") -> None:
        self.retriever = retriever
        self.name = "shout"
        self.suffix = suffix

    async def rewrite(self, query: str, *, tenant_id: str) -> str:
        return query.upper() + self.suffix


class NotAStage:
    name = "nothing"


@pytest.fixture(scope="module")
def corpus():  # type: ignore[no-untyped-def]
    return load_corpus(KB / "corpus.jsonl")


def _search(built, query: str = "api limit professional plan"):  # type: ignore[no-untyped-def]
    return asyncio.run(built.retriever.search(tenant_id="acme", query=query, top_k=3))


def test_a_user_reranker_named_by_module_and_class(corpus) -> None:  # type: ignore[no-untyped-def]
    config = parse_pipeline(
        {
            "retriever": {"type": "bm25"},
            "rerank": {"type": "test_stage_registry:KeywordReranker", "boost": 2.0, "top_n": 5},
        }
    )
    built = build_pipeline(config, corpus)
    assert built.info()["models"]["reranker"] == "keyword(boost=2)"
    found = _search(built)
    assert 0 < len(found) <= 3
    scores = [c["score"] if isinstance(c, dict) else c.score for c in found]
    assert scores == sorted(scores, reverse=True) and all(s == int(s) and s % 2 == 0 for s in scores)


def test_a_registered_rewriter_gets_the_pipeline_retriever(corpus) -> None:  # type: ignore[no-untyped-def]
    stages.register_stage("rewrite", "shout", ShoutRewriter)
    try:
        config = parse_pipeline({"retriever": {"type": "bm25"}, "rewrite": {"type": "shout", "suffix": "!"}})
        built = build_pipeline(config, corpus)
        assert built.info()["models"]["rewriter"] == "shout"
        assert "shout" in stages.stage_names("rewrite")
        assert _search(built)
    finally:
        stages._REGISTERED.pop("rewrite.shout")


@pytest.fixture
def entry_point(tmp_path: Path) -> Iterator[None]:
    dist = tmp_path / "userstages-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: userstages\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        "[ragaudit.stages]\nrerank.keyword = test_stage_registry:KeywordReranker\n"
    )
    sys.path.insert(0, str(tmp_path))
    try:
        yield
    finally:
        sys.path.remove(str(tmp_path))


def test_an_entry_point_stage_plugs_in_like_the_built_ins(entry_point: None, corpus) -> None:  # type: ignore[no-untyped-def]
    assert "keyword" in stages.stage_names("rerank")
    assert stages.stage_factory("rerank", "keyword") is KeywordReranker
    built = build_pipeline(
        parse_pipeline({"retriever": {"type": "bm25"}, "rerank": {"type": "keyword"}}), corpus
    )
    assert built.info()["models"]["reranker"] == "keyword(boost=1)"


def test_built_ins_are_found_through_the_same_registry() -> None:
    assert stages.stage_factory("rerank", "cross-encoder") is rerankers.cross_encoder_stage
    assert stages.stage_factory("rewrite", "rm3") is rewriters.rm3_stage
    assert stages.stage_names("rerank")[:4] == ["bi-encoder", "cross-encoder", "learned", "llm"]
    assert stages.stage_factory("rerank", "learned") is learned_fusion.learned_stage


def test_bad_user_stages_are_input_errors(corpus) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(InputError, match="NotAStage"):
        build_pipeline(
            parse_pipeline(
                {"retriever": {"type": "bm25"}, "rerank": {"type": "test_stage_registry:NotAStage"}}
            ),
            corpus,
        )
    with pytest.raises(InputError, match="cannot take these keys"):
        build_pipeline(
            parse_pipeline(
                {
                    "retriever": {"type": "bm25"},
                    "rerank": {"type": "test_stage_registry:KeywordReranker", "x": 1},
                }
            ),
            corpus,
        )
    with pytest.raises(ValidationError, match="unknown or missing type"):
        parse_pipeline({"retriever": {"type": "bm25"}, "rerank": {"type": "nope"}})
