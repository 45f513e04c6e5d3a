"""Rerank and rewrite stages of a pipeline, built from their configuration."""

from __future__ import annotations

from typing import Any

from ragaudit.pipelines.config import StageConfig
from ragaudit.retrieval.protocol import Retriever


def _chat_client(stage: StageConfig) -> Any:
    from ragaudit.errors import InputError
    from ragaudit.llm.chat import ChatClient

    base_url, model = stage.params.get("base_url"), stage.params.get("model")
    if not base_url or not model:
        raise InputError(
            f"[{stage.type}]",
            None,
            "an LLM stage needs base_url and model",
            'e.g. base_url = "http://localhost:8000/v1", model = "gpt-4o-mini", api_key_env = "OPENAI_API_KEY"',
        )
    return ChatClient(str(base_url), str(model), stage.params.get("api_key_env"))


def wrap_rerank(base: Retriever, stage: StageConfig) -> tuple[Retriever, str]:
    """``base`` wrapped in a rerank stage; returns the retriever and the reranker's name."""
    from ragaudit.retrieval.rerank import RerankRetriever

    reranker: Any
    if stage.type == "bi-encoder":
        from ragaudit.retrieval.dense import make_encoder
        from ragaudit.retrieval.rerankers import BiEncoderReranker

        reranker = BiEncoderReranker(
            make_encoder(stage.params.get("model"), backend=stage.params.get("backend"))
        )
    elif stage.type == "cross-encoder":
        from ragaudit.errors import InputError
        from ragaudit.retrieval.rerankers import CrossEncoderReranker

        if not stage.params.get("model"):
            raise InputError(
                "[rerank]",
                None,
                "a cross-encoder needs a local model folder",
                'model = "/path/to/cross-encoder"',
            )
        reranker = CrossEncoderReranker(str(stage.params["model"]))
    else:
        from ragaudit.retrieval.rerankers import LLMReranker

        prompt = stage.params.get("prompt")
        reranker = LLMReranker(_chat_client(stage), **({"prompt": prompt} if prompt else {}))
    return RerankRetriever(base, reranker, int(stage.params.get("top_n", 50))), str(reranker.name)


def wrap_rewrite(base: Retriever, stage: StageConfig) -> tuple[Retriever, str]:
    """``base`` wrapped in a query-rewrite stage; returns the retriever and the rewriter's name."""
    from ragaudit.retrieval.rewrite import RewriteRetriever

    rewriter: Any
    if stage.type == "synonyms":
        from ragaudit.retrieval.rewriters import SynonymRewriter, load_synonyms

        mapping = (
            load_synonyms(stage.params["mapping_file"])
            if "mapping_file" in stage.params
            else dict(stage.params.get("mapping", {}))
        )
        rewriter = SynonymRewriter(mapping)
    elif stage.type == "rm3":
        from ragaudit.retrieval.rewriters import RM3Rewriter

        p = stage.params
        rewriter = RM3Rewriter(
            base, int(p.get("fb_docs", 10)), int(p.get("fb_terms", 10)), float(p.get("original_weight", 0.5))
        )
    else:
        from ragaudit.retrieval.rewriters import LLMRewriter

        prompt = stage.params.get("prompt")
        rewriter = LLMRewriter(_chat_client(stage), **({"prompt": prompt} if prompt else {}))
    return RewriteRetriever(base, rewriter), str(rewriter.name)
